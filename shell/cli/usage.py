"""How the command line reads and presents itself: options anywhere, one-line usage errors,
git-like help with commands grouped and examples last.

typer parses; the classes here only change what a user sees. typer 0.29 vendors click as
``typer._click`` (its exceptions and help formatter are not re-exported), so this module is the
one place that touches it.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, TypeVar, Union, get_args, get_origin

import typer
from typer import _click
from typer._click.exceptions import BadParameter, ClickException, MissingParameter, NoSuchOption, UsageError
from typer._coercion import RuntimeParam
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption, _TyperParameter

from turnmark.core.text.terminal import not_utf8
from turnmark.shell.cli.help import COMMAND_GROUPS, EXAMPLES
from turnmark.shell.errors import TurnmarkError
from turnmark.shell.output import chrome

CommandFunction = TypeVar("CommandFunction", bound=Callable[..., Any])

GLOBAL_VALUE_OPTIONS = ("--workspace", "-w", "--cfg", "-c", "--format", "-F", "--jobs", "-j")
GLOBAL_FLAGS = ("--version",)
OWN_OPTIONS = {
    "watch": {"--workspace", "-w"},
    **{
        command: {"--format", "-F"}
        for command in (
            "conversations", "turns", "check", "project", "summarize", "transcript", "repair", "strip", "fork",
            "show",
        )
    },
}  # fmt: skip
"""The global options a command defines itself (its own meaning wins where it is given)."""


def global_options_first(argv: Sequence[str]) -> list[str]:
    """``argv`` with the global options given after the command moved before it, as users type them
    (``turnmark summarize CONV --cfg k=v``); options the command defines itself stay where they are."""
    argv = list(argv)
    position = 0
    while position < len(argv) and argv[position].startswith("-") and argv[position] != "--":
        position += 2 if argv[position] in GLOBAL_VALUE_OPTIONS else 1
    if position >= len(argv):
        return argv
    command, before, rest = argv[position], argv[: position + 1], argv[position + 1 :]
    own = OWN_OPTIONS.get(command, set())
    moved: list[str] = []
    kept: list[str] = []
    index = 0
    while index < len(rest):
        token = rest[index]
        if token == "--":
            kept += rest[index:]
            break
        name = token.split("=", 1)[0]
        if name in GLOBAL_FLAGS:
            moved.append(token)
            index += 1
            continue
        if name in GLOBAL_VALUE_OPTIONS and name not in own:
            takes_value = "=" not in token and index + 1 < len(rest)
            moved += rest[index : index + 2] if takes_value else [token]
            index += 2 if takes_value else 1
            continue
        kept.append(token)
        index += 1
    return [*before[:-1], *moved, command, *kept]


def one_of(values: Sequence[str]) -> str:
    """``text or json``, ``a, b or c``."""
    return values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"


def parameter_name(param: Any) -> str:
    if isinstance(param, TyperOption):
        longest = max(param.opts, key=len, default=param.name or "")
        return str(longest)
    return str(getattr(param, "display_name_raw", None) or (param.name or "").upper())


def bad_value(error: BadParameter) -> str:
    """``--format must be text or json``, ``--settle must be a number``."""
    name = parameter_name(error.param)
    annotation = getattr(getattr(error.param, "type_descriptor", None), "annotation", None)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return f"{name} must be {one_of([str(member.value) for member in annotation])}"
    reason = error.message.removeprefix("Value error, ").split(", unable to")[0].rstrip(".")
    if not reason.startswith(("Input should", "must")):
        return f"{name}: {reason}"
    reason = reason.replace("Input should be ", "must be ").replace("a valid integer", "a whole number")
    reason = reason.replace("a valid number", "a number")
    return f"{name} {reason[:1].lower()}{reason[1:]}"


def usage_line(error: UsageError) -> str:
    """A usage error as one line: what is wrong, and where to read more."""
    path = error.ctx.command_path if error.ctx is not None else "turnmark"
    see = f" (see '{path} --help')"
    if isinstance(error, MissingParameter) and error.param is not None:
        return f"{path}: missing {parameter_name(error.param)}{see}"
    if isinstance(error, BadParameter) and error.param is not None:
        return bad_value(error) + see
    if isinstance(error, NoSuchOption):
        close = sorted(error.possibilities or ())
        guess = f"; did you mean {one_of(close)}?" if close else ""
        return f"{path} has no option {error.option_name}{guess}{see}"
    message = error.format_message().rstrip(".")
    return f"{path}: {message[:1].lower()}{message[1:]}{see}"


def run_main(invoke: Callable[..., Any], args: Sequence[str] | None, standalone_mode: bool, **extra: Any) -> Any:
    """Run click's ``main`` without its standalone handling, and report errors as one line each."""
    argv = global_options_first(sys.argv[1:] if args is None else args)
    try:
        result = invoke(argv, standalone_mode=False, **extra)
        code = result if isinstance(result, int) else 0
    except _click.exceptions.NoArgsIsHelpError as error:
        bare = error.ctx is None or error.ctx.parent is None
        (sys.stdout if bare else sys.stderr).write(error.format_message() + "\n")
        code = 0 if bare else error.exit_code
    except UsageError as error:
        if not standalone_mode:
            raise
        chrome(f"error: {usage_line(error)}")
        code = error.exit_code
    except ClickException as error:
        if not standalone_mode:
            raise
        chrome(f"error: {error.format_message()}")
        code = error.exit_code
    except typer.Abort:
        if not standalone_mode:
            raise
        chrome("aborted")
        code = 1
    except TurnmarkError as error:
        chrome(f"error: {error}")
        code = 2
    if standalone_mode:
        sys.exit(code)
    return code


RANGE_NOTE = re.compile(r"\s*\[x>=[01](?:\.0)?\]|; x>=[01](?:\.0)?(?=\])|; [01]<=x<=\d+(?=\])")
"""click's ``[x>=0]``, ``[x>=1]`` or ``1<=x<=N`` after an option's help: the help already says it counts
something (and says its bound)."""


def plain_argument(param: TyperArgument) -> str:
    name = param.display_name_raw
    optional = not param.required and not name.startswith("[")
    return f"[{name}]" if optional else name


def yes_or_no(text: str) -> bool:
    answers = {"true": True, "1": True, "yes": True, "on": True, "false": False, "0": False, "no": False, "off": False}
    if text.lower() not in answers:
        raise ValueError(text)
    return answers[text.lower()]


NAMES_ON_DISK = frozenset({"CONV", "[CONV] MESSAGE"})
"""Arguments that may name a folder, whose name can be any bytes (the message is checked by ``query``);
every other text a command takes must be UTF-8, as turnmark stores and sends it."""


def must_be_utf8(value: str) -> str | None:
    """Why ``value`` cannot be used as text (it holds bytes that are not UTF-8), or ``None``."""
    shown = not_utf8(value)
    return f"must be UTF-8 text, and {shown} is not" if shown else None


SCALARS: dict[type, Callable[[str], Any]] = {str: str, int: int, float: float, Path: Path, bool: yes_or_no}
NOT_A = {int: "a whole number", float: "a number", bool: "true or false"}


def without_none(annotation: Any) -> Any:
    """``X`` of ``X | None`` (anything else as it is)."""
    if get_origin(annotation) in (Union, types.UnionType):
        rest = [arg for arg in get_args(annotation) if arg is not type(None)]
        return rest[0] if len(rest) == 1 else annotation
    return annotation


def scalar_type(annotation: Any) -> type | None:
    """The one type a value is coerced to, or ``None`` when it is not a plain one."""
    if isinstance(annotation, type) and (annotation in SCALARS or issubclass(annotation, Enum)):
        return annotation
    return None


@dataclass(frozen=True)
class PlainRuntimeParam(RuntimeParam):
    """typer's coercion of a command-line value without pydantic, for the plain types the CLI uses
    (``str``, ``int``, ``float``, ``Path``, enums, ``X | None``, ``list[X]``): importing pydantic and
    building its validators took most of a short command's start-up."""

    element: type = str

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: _click.Context) -> Any:
        if isinstance(value, (list, tuple)):
            return [self._one(item, param, ctx) for item in value]
        return self._one(value, param, ctx)

    def _one(self, value: Any, param: _TyperParameter, ctx: _click.Context) -> Any:
        if isinstance(value, self.element):
            result = value
        elif issubclass(self.element, Enum):
            choices = [str(member.value) for member in self.element]
            if str(value) not in choices:
                raise BadParameter(f"{value!r} is not one of {one_of(choices)}", ctx=ctx, param=param)
            result = self.element(str(value))
        else:
            try:
                result = SCALARS[self.element](str(value))
            except ValueError as error:
                raise BadParameter(f"must be {NOT_A.get(self.element, 'valid')}", ctx=ctx, param=param) from error
        if isinstance(result, str) and not (isinstance(param, TyperArgument) and param.metavar in NAMES_ON_DISK):
            problem = must_be_utf8(result)
            if problem:
                raise BadParameter(problem, ctx=ctx, param=param)
        low, high = getattr(param, "min", None), getattr(param, "max", None)
        if low is not None and result < low:
            raise BadParameter(f"must be greater than or equal to {low:g}", ctx=ctx, param=param)
        if high is not None and result > high:
            raise BadParameter(
                f"must be less than or equal to {high:{'d' if isinstance(high, int) else 'g'}}", ctx=ctx, param=param
            )
        return result


def plain_coercion(param: Any) -> None:
    """Give ``param`` the pydantic-free coercion when its annotation is a plain one."""
    descriptor = getattr(param, "type_descriptor", None)
    if getattr(param, "_runtime_param", True) is not None or descriptor is None or descriptor.file_annotation:
        return
    annotation = without_none(descriptor.annotation)
    if get_origin(annotation) is list:
        annotation = get_args(annotation)[0]
    element = scalar_type(annotation)
    if element is not None:
        param._runtime_param = PlainRuntimeParam(descriptor.parameter_info, descriptor.annotation, element)


def global_options(ctx: _click.Context) -> list[tuple[str, str]]:
    """The help rows of the ``turnmark`` options a command also takes (those it does not define itself)."""
    root = ctx.find_root()
    if root is ctx:
        return []
    own = {name for param in ctx.command.params for name in getattr(param, "opts", ())}
    movable = {*GLOBAL_VALUE_OPTIONS, *GLOBAL_FLAGS}
    return [
        (names, RANGE_NOTE.sub("", text))
        for param in root.command.get_params(root)
        if isinstance(param, TyperOption)
        and movable.intersection(param.opts)
        and not own.intersection(param.opts)
        and (record := param.get_help_record(root))
        for names, text in [record]
    ]


class PlainParams(_click.Command):
    """Every parameter with the pydantic-free coercion, those typer adds after ``__init__`` too."""

    def get_params(self, ctx: _click.Context) -> list[Any]:
        params = super().get_params(ctx)
        for param in params:
            plain_coercion(param)
        return params


class TurnmarkCommand(PlainParams, TyperCommand):
    """A command whose help reads like git's: ``CONV`` not ``{CONV}``, no value types, examples last."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if isinstance(param, TyperOption) and not param.is_flag and param.metavar is None:
                param.metavar = (param.name or "value").upper()

    def format_options(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        params = [param for param in self.get_params(ctx) if not getattr(param, "hidden", False)]
        arguments = [(plain_argument(param), param.help or "") for param in params if isinstance(param, TyperArgument)]
        options = [
            (names, RANGE_NOTE.sub("", text))
            for param in params
            if isinstance(param, TyperOption) and (record := param.get_help_record(ctx))
            for names, text in [record]
        ]
        for title, rows in (("Arguments", arguments), ("Options", options), ("Global options", global_options(ctx))):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)

    def collect_usage_pieces(self, ctx: _click.Context) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                pieces.append(plain_argument(param))
        return pieces

    def format_epilog(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        write_examples(formatter, EXAMPLES.get(command_path(ctx), ()))


def command_path(ctx: _click.Context) -> str:
    """The command's words after ``turnmark`` (``summary set``), as ``EXAMPLES`` keys them."""
    words: list[str] = []
    while ctx.parent is not None:
        words.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(words)


class TurnmarkSubgroup(PlainParams, TyperGroup):
    """A command with subcommands (``turnmark summary set``): its commands listed, its examples last."""

    def format_options(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        options = [
            (names, text)
            for param in self.get_params(ctx)
            if not getattr(param, "hidden", False) and (record := param.get_help_record(ctx))
            for names, text in [record]
        ]
        for title, rows in (("Options", options), ("Global options", global_options(ctx))):
            with formatter.section(title):
                formatter.write_dl(rows)
        with formatter.section("Commands"):
            formatter.write_dl(
                [(name, command.get_short_help_str(limit=200)) for name, command in self.commands.items()]
            )

    def format_epilog(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        write_examples(formatter, EXAMPLES.get(command_path(ctx), ()))


class TurnmarkGroup(PlainParams, TyperGroup):
    """The ``turnmark`` group: options anywhere, one-line usage errors, commands listed by group."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        def invoke(argv: list[str], **options: Any) -> Any:
            return super(TurnmarkGroup, self).main(argv, prog_name, complete_var, **options)

        return run_main(invoke, args, standalone_mode, windows_expand_args=windows_expand_args, **extra)

    def format_options(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        rows = [
            (names, RANGE_NOTE.sub("", text))
            for param in self.get_params(ctx)
            if not getattr(param, "hidden", False) and (record := param.get_help_record(ctx))
            for names, text in [record]
        ]
        with formatter.section("Options"):
            formatter.write_dl(rows)
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        listed = set()
        for group, names in COMMAND_GROUPS:
            rows = []
            for name in names:
                command = self.get_command(ctx, name)
                if command is not None and not command.hidden:
                    rows.append((name, command.get_short_help_str(limit=200)))
                    listed.add(name)
            if rows:
                with formatter.section(group):
                    formatter.write_dl(rows)
        others = [name for name in self.list_commands(ctx) if name not in listed and not self.commands[name].hidden]
        if others:
            with formatter.section("Other commands"):
                formatter.write_dl([(name, self.commands[name].get_short_help_str(limit=200)) for name in others])

    def format_epilog(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)
        write_examples(formatter, EXAMPLES.get("", ()))


def write_examples(formatter: _click.HelpFormatter, examples: Sequence[tuple[str, str]]) -> None:
    """An ``Examples:`` section: each invocation, with what it does on the line below."""
    if not examples:
        return
    with formatter.section("Examples"):
        for number, (invocation, purpose) in enumerate(examples):
            if number:
                formatter.write("\n")
            formatter.write(f"{'':>{formatter.current_indent}}$ {invocation}\n")
            formatter.write(f"{'':>{formatter.current_indent + 4}}{purpose}\n")


class TurnmarkTyper(typer.Typer):
    """``typer.Typer`` whose commands are ``TurnmarkCommand`` unless they say otherwise."""

    def command(
        self, name: str | None = None, *, cls: type[TyperCommand] | None = None, **kwargs: Any
    ) -> Callable[[CommandFunction], CommandFunction]:
        return super().command(name, cls=cls or TurnmarkCommand, **kwargs)
