"""Reading JP's configuration files, environment and ``--cfg`` values into layers (jp-runtime §4.4).

Files, low to high: user-global (``$JP_GLOBAL_CONFIG_DIR`` or ``~/.config/jp``),
the workspace's ``.jp/config.toml``, every ``.jp.toml`` from the workspace
root down to the current directory, and the user-local silo's
``config.toml``; each after the files its ``extends`` globs name. Then
``JP_CFG_*``, the conversation's own config, and ``--cfg``. Run as a JP plugin, the configuration
``jp`` resolved (``Workspace.config``) stands for the files and ``JP_CFG_*``.

Config files come with a ``git clone``, so reading them is bounded. Each file
is read through the guarded read (a regular file of at most ``CONFIG_LIMIT``;
a FIFO, device or link loop is an error naming it). An ``extends`` entry
without wildcards names one file, anywhere (relative to its config file). A
glob is walked only inside its config file's folder (an absolute glob or one
with ``..`` is an error), never through a link to a folder (an error naming
the link: JP would follow it, so skipping it would silently differ), at most
``MAX_EXTENDS_DEPTH`` folders deep; one run looks at no more than
``MAX_EXTENDS_ENTRIES`` names and reads no more than ``MAX_CONFIG_FILES``
files. These bounds also stop loops no link makes (a bind mount).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from returns.result import Failure, Result

from turnmark.core.errors import ConfigError
from turnmark.core.stream.config import (
    DEFAULTS,
    MAX_MESSAGE_CHARS,
    assignment,
    conversation_layers,
    environment_layer,
    extends_patterns,
    glob_segments,
    is_glob,
    lookup,
    max_message_chars,
    merge_all,
    name_matches,
    parse_toml,
)
from turnmark.core.stream.json_value import JsonObject
from turnmark.shell.errors import ConfigProblem, FileFault
from turnmark.shell.storage.files import CONFIG_LIMIT, read_file
from turnmark.shell.storage.workspace import Workspace

if TYPE_CHECKING:
    from turnmark.core.stream.conversation_stream import ConversationStream

T = TypeVar("T")

FROM_JP = "the configuration jp resolved (the plugin's init)"
"""The layer that stands for the files and ``JP_CFG_*`` when ``jp`` runs turnmark as a plugin."""
MAX_CONFIG_FILES = 100
"""Config files one run reads, ``extends`` included."""
MAX_EXTENDS_ENTRIES = 10_000
"""Names the ``extends`` globs of one run look at."""
MAX_EXTENDS_DEPTH = 8
"""Folders below its config file an ``extends`` glob may go."""


def _ok(result: Result[T, ConfigError]) -> T:
    if isinstance(result, Failure):
        raise ConfigProblem(result.failure().describe())
    return result.unwrap()


@dataclass
class _Reader:
    """One run's config files: those read so far and the names its globs looked at, within the bounds."""

    seen: set[Path] = field(default_factory=set)
    looked_at: int = 0

    def file_layers(self, path: Path) -> list[JsonObject]:
        """The file's layers (its ``extends`` first); ``[]`` when it is absent or already read.

        Errors name ``path`` as given; its ``extends`` are relative to the folder of the file it links to.
        """
        real = Path(os.path.realpath(path))
        if real in self.seen:
            return []
        if len(self.seen) >= MAX_CONFIG_FILES:
            raise ConfigProblem(f"{path}: not read: more than {MAX_CONFIG_FILES} config files (extends included)")
        try:
            data = read_file(path, CONFIG_LIMIT)
        except FileFault as fault:
            raise ConfigProblem(str(fault)) from None
        if data is None:
            return []
        self.seen.add(real)
        layer = _ok(parse_toml(data, str(path)))
        before: list[JsonObject] = []
        for pattern in extends_patterns(layer):
            for extra in self._extends(path, real.parent, pattern):
                before += self.file_layers(extra)
        return [*before, layer]

    def _extends(self, declaring: Path, folder: Path, pattern: str) -> list[Path]:
        """The ``.toml`` files one ``extends`` entry of ``declaring`` names, sorted, relative to ``folder``."""
        if not is_glob(pattern):
            return [folder / pattern] if pattern.endswith(".toml") else []
        segments = glob_segments(pattern)
        if isinstance(segments, Failure):
            raise ConfigProblem(
                f"{declaring}: extends {pattern!r}: not walked, {segments.failure()}; a glob may only look inside "
                f"{folder} (one file elsewhere may be named by its path)"
            )
        found = _Glob(self, declaring, pattern).matches(folder, segments.unwrap(), 0)
        return sorted((path for path in found if path.name.endswith(".toml")), key=str)


@dataclass
class _Glob:
    """One ``extends`` glob being walked: no folder link followed, no deeper or wider than the bounds."""

    reader: _Reader
    declaring: Path
    pattern: str

    def _problem(self, what: str) -> ConfigProblem:
        return ConfigProblem(f"{self.declaring}: extends {self.pattern!r}: {what}")

    def _look(self) -> None:
        self.reader.looked_at += 1
        if self.reader.looked_at > MAX_EXTENDS_ENTRIES:
            raise self._problem(f"looks at more than {MAX_EXTENDS_ENTRIES} names; narrow it")

    def _names(self, directory: Path, segment: str) -> Iterator[Path]:
        """The paths in ``directory`` that ``segment`` matches (a plain name is looked up, not listed)."""
        if not is_glob(segment):
            self._look()
            if os.path.lexists(directory / segment):
                yield directory / segment
            return
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    self._look()
                    if name_matches(segment, entry.name):
                        yield Path(entry.path)
        except OSError:
            return

    def _enterable(self, path: Path, depth: int) -> bool:
        """Whether the walk goes into ``path``: a real folder; a link to one is an error, and so is depth."""
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode) and stat.S_ISDIR(os.stat(path).st_mode):
                raise self._problem(f"{path} is a link to a folder, and globs follow no folder links")
        except OSError:
            return False
        if not stat.S_ISDIR(mode):
            return False
        if depth >= MAX_EXTENDS_DEPTH:
            raise self._problem(f"goes deeper than {MAX_EXTENDS_DEPTH} folders (at {path})")
        return True

    def matches(self, directory: Path, segments: tuple[str, ...], depth: int) -> Iterator[Path]:
        """What ``segments`` match under ``directory`` (a real folder ``depth`` folders below the config file)."""
        head, rest = segments[0], segments[1:]
        if head == "**":
            yield from self.matches(directory, rest, depth)
            for path in self._names(directory, "*"):
                if self._enterable(path, depth):
                    yield from self.matches(path, segments, depth + 1)
            return
        for path in self._names(directory, head):
            if not rest:
                if not _is_folder(path):
                    yield path
            elif self._enterable(path, depth):
                yield from self.matches(path, rest, depth + 1)


def _is_folder(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def config_files(workspace: Workspace | None, cwd: Path, environ: Mapping[str, str]) -> list[Path]:
    """The config files JP reads, lowest precedence first (missing ones included; they are skipped)."""
    global_dir = environ.get("JP_GLOBAL_CONFIG_DIR")
    xdg = environ.get("XDG_CONFIG_HOME")
    user_global = Path(global_dir) if global_dir else (Path(xdg) / "jp" if xdg else Path.home() / ".config" / "jp")
    files = [user_global / "config.toml"]
    if workspace is not None:
        files.append(workspace.storage / "config.toml")
        root = workspace.root.resolve()
        here = cwd.resolve()
        chain = [here, *here.parents]
        if root in chain:
            files += [directory / ".jp.toml" for directory in reversed(chain[: chain.index(root) + 1])]
        if workspace.user_silo is not None:
            files.append(workspace.user_silo / "config.toml")
    return files


def _cfg_layer(value: str) -> JsonObject:
    if value.startswith("@") or ("=" not in value and not value.lstrip().startswith("{")):
        layers = _Reader().file_layers(Path(value.removeprefix("@").strip()))
        if not layers:
            raise ConfigProblem(f"--cfg {value}: no such config file")
        return merge_all(layers)
    return _ok(assignment(value))


Layers = tuple[tuple[str, JsonObject], ...]
"""Configuration layers in JP's order, lowest first, each with where it came from."""


def run_layers(
    workspace: Workspace | None, environ: Mapping[str, str] | None = None, cwd: Path | None = None
) -> Layers:
    """The layers every conversation of a run shares: turnmark's defaults, JP's user and workspace files (or
    the configuration ``jp`` handed over) and the ``JP_CFG_*`` environment; read once per run."""
    env = os.environ if environ is None else environ
    layers: list[tuple[str, JsonObject]] = [("turnmark's defaults", DEFAULTS)]
    if workspace is not None and workspace.config is not None:
        layers.append((FROM_JP, workspace.config))
    else:
        reader = _Reader()
        for path in config_files(workspace, cwd or Path.cwd(), env):
            layers += [(str(path), layer) for layer in reader.file_layers(path)]
        layers.append(("the JP_CFG_* environment variables", _ok(environment_layer(env))))
    return tuple(layers)


def config_layers(
    workspace: Workspace | None,
    stream: ConversationStream | None,
    cfg: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    *,
    shared: Layers | None = None,
) -> list[tuple[str, JsonObject]]:
    """Every layer in JP's order, lowest first, each with where it came from; ``shared`` are the run's
    ``run_layers`` when it read them already."""
    layers = list(run_layers(workspace, environ, cwd) if shared is None else shared)
    if stream is not None:
        layers += [("the conversation's own config", layer) for layer in conversation_layers(stream)]
    layers += [(f"--cfg {value}", _cfg_layer(value)) for value in cfg]
    return layers


def layer_of(layers: list[tuple[str, JsonObject]], key: str) -> str:
    """Where the effective value of ``key`` was set: the highest layer that sets it."""
    return next((name for name, layer in reversed(layers) if lookup(layer, key) is not None), "no layer")


def effective_config(
    workspace: Workspace | None,
    stream: ConversationStream | None,
    cfg: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> JsonObject:
    """Every layer merged in JP's order; a broken source raises ``ConfigProblem`` naming it."""
    return merge_all(layer for _, layer in config_layers(workspace, stream, cfg, environ, cwd))


def transcript_limit(layers: list[tuple[str, JsonObject]]) -> int:
    """``conversation.turn_summary.transcript.max_message_chars`` of these layers; a bad value raises
    ``ConfigProblem`` naming the key and the layer that set it."""
    result = max_message_chars(merge_all(layer for _, layer in layers))
    if isinstance(result, Failure):
        raise ConfigProblem(f"{layer_of(layers, MAX_MESSAGE_CHARS)}: {result.failure()}")
    return result.unwrap()
