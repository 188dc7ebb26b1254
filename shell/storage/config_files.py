"""Reading JP's configuration files, environment and ``--cfg`` values into layers (jp-runtime §4.4).

Files, low to high: user-global (``$JP_GLOBAL_CONFIG_DIR`` or ``~/.config/jp``),
the workspace's ``.jp/config.toml``, every ``.jp.toml`` from the workspace
root down to the current directory, and the user-local silo's
``config.toml``; each after the files its ``extends`` globs name. Then
``JP_CFG_*``, the conversation's own config, and ``--cfg``.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TypeVar

from returns.result import Failure, Result

from turnmark.core.errors import ConfigError
from turnmark.core.stream.config import (
    DEFAULTS,
    MAX_MESSAGE_CHARS,
    assignment,
    conversation_layers,
    environment_layer,
    extends_patterns,
    lookup,
    max_message_chars,
    merge_all,
    parse_toml,
)
from turnmark.core.stream.conversation_stream import ConversationStream
from turnmark.core.stream.json_value import JsonObject
from turnmark.shell.errors import ConfigProblem
from turnmark.shell.storage.workspace import Workspace

T = TypeVar("T")


def _ok(result: Result[T, ConfigError]) -> T:
    if isinstance(result, Failure):
        raise ConfigProblem(result.failure().describe())
    return result.unwrap()


def _file_layers(path: Path, seen: set[Path]) -> list[JsonObject]:
    path = path.resolve()
    if path in seen or not path.is_file():
        return []
    seen.add(path)
    layer = _ok(parse_toml(path.read_bytes(), str(path)))
    before: list[JsonObject] = []
    for pattern in extends_patterns(layer):
        for extra in sorted(glob.glob(os.path.join(path.parent, pattern), recursive=True)):
            if extra.endswith(".toml"):
                before += _file_layers(Path(extra), seen)
    return [*before, layer]


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
        path = Path(value.removeprefix("@").strip())
        if not path.is_file():
            raise ConfigProblem(f"--cfg {value}: no such config file")
        layers = _file_layers(path, set())
        return merge_all(layers)
    return _ok(assignment(value))


def config_layers(
    workspace: Workspace | None,
    stream: ConversationStream | None,
    cfg: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
    cwd: Path | None = None,
) -> list[tuple[str, JsonObject]]:
    """Every layer in JP's order, lowest first, each with where it came from."""
    env = os.environ if environ is None else environ
    layers: list[tuple[str, JsonObject]] = [("turnmark's defaults", DEFAULTS)]
    seen: set[Path] = set()
    for path in config_files(workspace, cwd or Path.cwd(), env):
        layers += [(str(path), layer) for layer in _file_layers(path, seen)]
    layers.append(("the JP_CFG_* environment variables", _ok(environment_layer(env))))
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
