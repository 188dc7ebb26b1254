"""The workspace's cache database: one SQLite file that ``find``'s index and the workspace cache live in.

It is ``cache.sqlite3`` in the workspace's folder under the user's cache directory
(``state_dirs.cache_dir``: ``~/.cache/turnmark/<workspace>-<digest>/``), never inside the workspace: a
``.jp`` folder may be committed and shipped, and the cache holds the text of the user-local
conversations too.

It is only a cache: a missing file is built, and one that SQLite cannot read or that has another
schema version is removed and built again, with a note; a conversation's rows are trusted only while
its files keep the identity they had (``core/search/freshness.py``). The folder is reached from the
cache home without following a link (``files.open_directory``, made with mode 0700) and the database and
its side files must be absent or regular files with one name before SQLite opens them, so nothing is
written through a link. Readers never wait: the journal is a write-ahead log. Writers take the cache's
lock, an ``flock`` on the workspace's cache folder, so one process writes at a time and a rebuild never
removes a file another writer is filling.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from turnmark.core.search.scopes import LIGHT_SCOPES, SCOPES
from turnmark.shell.errors import FileFault, reraise_interrupt
from turnmark.shell.storage import pruning, state_dirs
from turnmark.shell.storage.files import open_directory, os_reason, refuse_links
from turnmark.shell.storage.workspace import Workspace

NAME = "cache.sqlite3"
SIDE_FILES = ("-wal", "-shm", "-journal")
SCHEMA_VERSION = 7
FTS_TABLES = ("turns_fts", "turns_all_fts")
"""``find``'s text, one row per turn (rowid: ``turns.id``): the default scopes, and all of them."""
T = TypeVar("T")
BATCH = 64
"""Conversations written per transaction while the cache is built (readers see progress, the log stays small)."""
LOCK_WAIT = 10.0
"""How long a writer waits for another writer (one conversation's update, or a build) before giving up."""

_TOKENIZE = "tokenize='unicode61 remove_diacritics 2'"
AUTOMERGE = 16
"""How many segments of one level FTS5 lets pile up before it merges them (its default: 4). Fewer, bigger
merges: a fifth of the index build's SQLite time over 10,000 conversations, the searches as quick."""
SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE conversations (
        conversation TEXT PRIMARY KEY,
        directory TEXT NOT NULL,
        events_device INTEGER, events_inode INTEGER, events_size INTEGER, events_mtime_ns INTEGER,
        events_ctime_ns INTEGER, events_sha256 TEXT,
        metadata_device INTEGER, metadata_inode INTEGER, metadata_size INTEGER, metadata_mtime_ns INTEGER,
        metadata_ctime_ns INTEGER, metadata_sha256 TEXT,
        base_config_device INTEGER, base_config_inode INTEGER, base_config_size INTEGER,
        base_config_mtime_ns INTEGER, base_config_ctime_ns INTEGER, base_config_sha256 TEXT,
        checked_ns INTEGER NOT NULL,
        title TEXT, last_activated_at TEXT, forked_from TEXT,
        turns INTEGER NOT NULL DEFAULT 0, summarized_turns INTEGER NOT NULL DEFAULT 0,
        problem TEXT,
        indexed INTEGER NOT NULL DEFAULT 0, cached INTEGER NOT NULL DEFAULT 0,
        legacy INTEGER, entries INTEGER, unresolved_links INTEGER, duplicated_ids INTEGER, metadata_error TEXT,
        waiting_before_last INTEGER, waiting_last INTEGER, waiting_extractive INTEGER,
        check_report TEXT
    )""",
    """CREATE TABLE plans (
        conversation TEXT PRIMARY KEY,
        inputs TEXT NOT NULL,
        report TEXT NOT NULL
    )""",
    """CREATE TABLE turns (
        id INTEGER PRIMARY KEY,
        conversation TEXT NOT NULL,
        turn_index INTEGER NOT NULL,
        turn_id TEXT, id_transient INTEGER NOT NULL,
        started_at INTEGER, date TEXT,
        label TEXT, label_source TEXT,
        spans TEXT NOT NULL,
        digest TEXT NOT NULL,
        UNIQUE (conversation, turn_index)
    )""",
    "CREATE INDEX turns_started_at ON turns (started_at)",
    """CREATE TABLE listing (
        root TEXT PRIMARY KEY,
        layout TEXT NOT NULL,
        looks BLOB NOT NULL,
        rows BLOB NOT NULL,
        text TEXT
    )""",
    f"CREATE VIRTUAL TABLE {FTS_TABLES[0]} USING fts5({', '.join(LIGHT_SCOPES)}, {_TOKENIZE})",
    f"CREATE VIRTUAL TABLE {FTS_TABLES[1]} USING fts5({', '.join(SCOPES)}, {_TOKENIZE})",
    *(f"INSERT INTO {table} ({table}, rank) VALUES ('automerge', {AUTOMERGE})" for table in FTS_TABLES),
)
"""Schema version 7 (docs/architecture.md describes it): change it only with ``SCHEMA_VERSION``."""


class CacheBusy(FileFault):
    """Another process kept the cache's lock longer than ``LOCK_WAIT``."""


def damaged(error: sqlite3.Error) -> bool:
    """SQLite says the file is not a database, a damaged one, or one whose tables are not the ones its schema
    version promises (a cache's only cure: build it again)."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB):
        return True
    return isinstance(error, sqlite3.OperationalError) and str(error).startswith(("no such table", "no such column"))


def cache_path(workspace: Workspace) -> Path:
    return state_dirs.cache_dir(workspace) / NAME


def _check_files(directory_fd: int, directory: Path) -> None:
    """Each of the database's files is absent or a regular file with no other name."""
    refuse_links(directory_fd, directory, (NAME, *(NAME + side for side in SIDE_FILES)), one_name=True)


def _remove_files(directory_fd: int) -> None:
    for name in (NAME, *(NAME + side for side in SIDE_FILES)):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=directory_fd)


def _inode(directory_fd: int) -> int | None:
    try:
        return os.stat(NAME, dir_fd=directory_fd, follow_symlinks=False).st_ino
    except FileNotFoundError:
        return None


def _configure(connection: sqlite3.Connection) -> None:
    """SQLite's defensive settings (where this Python exposes them), then the journal and the timeout."""
    if hasattr(connection, "setconfig") and hasattr(sqlite3, "SQLITE_DBCONFIG_DEFENSIVE"):
        connection.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
    if hasattr(connection, "enable_load_extension"):
        connection.enable_load_extension(False)
    connection.execute("PRAGMA trusted_schema = OFF")
    connection.execute("PRAGMA cell_size_check = ON")
    connection.execute(f"PRAGMA busy_timeout = {int(LOCK_WAIT * 1000)}")
    mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() not in ("wal", "memory"):
        raise sqlite3.DatabaseError(f"journal mode {mode} instead of wal")
    connection.execute("PRAGMA synchronous = NORMAL")


Schema = tuple[tuple[object, ...], ...]
"""Every object in ``sqlite_master`` with its SQL, then each table's and view's columns (``table_xinfo``)."""


def _objects(connection: sqlite3.Connection) -> Schema:
    return tuple(
        connection.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()
    )


def _columns(connection: sqlite3.Connection, objects: Schema) -> Schema:
    """Compiles the tables and views named, never runs them."""
    return tuple(
        (name, *column)
        for kind, name, *_ in objects
        if kind in ("table", "view")
        for column in connection.execute("SELECT * FROM pragma_table_xinfo(?)", (name,)).fetchall()
    )


@functools.cache
def expected_schema() -> tuple[Schema, Schema]:
    """The schema this version creates, read back from a database made in memory (once per process)."""
    connection = sqlite3.connect(":memory:", isolation_level=None)
    try:
        create_schema(connection)
        objects = _objects(connection)
        return objects, _columns(connection, objects)
    finally:
        connection.close()


def _described(row: tuple[object, ...]) -> str:
    name = str(row[1])
    return f"{row[0]} {name if len(name) <= 60 else name[:59] + '…'}"


def schema_problem(connection: sqlite3.Connection) -> str | None:
    """Why the file's schema is not the one this version creates (``None``: it is, or the file is empty).

    Reads only ``sqlite_master`` and the columns' declared types, before anything is written: a trigger or a
    view someone else put there is never run.
    """
    try:
        objects = _objects(connection)
        if not objects:
            return None
        expected_objects, expected_columns = expected_schema()
        if objects != expected_objects:
            extra = sorted(set(objects) - set(expected_objects), key=_described)
            missing = sorted(set(expected_objects) - set(objects), key=_described)
            if extra:
                return f"schema: an unexpected or changed {_described(extra[0])}"
            return f"schema: no {_described(missing[0])}"
        columns = _columns(connection, objects)
    except sqlite3.Error as error:
        reraise_interrupt(error)
        return f"schema: {error}"
    if columns != expected_columns:
        changed = next((column for column in columns if column not in expected_columns), ("a table", 0, "a column"))
        return f"schema: the column {changed[0]}.{changed[2]} differs from this version's"
    return None


def _version(connection: sqlite3.Connection) -> int | None:
    """The schema version the file says, ``None`` for an empty database."""
    tables = connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    if not tables:
        return None
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row and str(row[0]).isdecimal() else -1


def create_schema(connection: sqlite3.Connection) -> None:
    connection.execute("BEGIN IMMEDIATE")
    for statement in SCHEMA:
        connection.execute(statement)
    connection.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    connection.execute("COMMIT")


def _connect(path: str) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=LOCK_WAIT, isolation_level=None, check_same_thread=False)


class CacheDb:
    """An open cache database; ``notes`` says what happened to it on the way (built, rebuilt)."""

    def __init__(self, connection: sqlite3.Connection, path: Path | None, directory_fd: int | None) -> None:
        self.connection = connection
        self.path = path
        self.notes: list[str] = []
        self.created = False
        self._directory_fd = directory_fd
        self._inode = _inode(directory_fd) if directory_fd is not None else None
        self._writing = False
        self._reopened = False

    @property
    def in_memory(self) -> bool:
        return self.path is None

    def close(self) -> None:
        self.connection.close()
        if self._directory_fd is not None:
            os.close(self._directory_fd)
            self._directory_fd = None

    def __enter__(self) -> CacheDb:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lock(self, wait: float) -> bool:
        assert self._directory_fd is not None
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(self._directory_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except OSError as error:
                if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise FileFault(f"{self.path}: cannot lock: {os_reason(error)}") from None
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)

    @contextlib.contextmanager
    def writing(self, wait: float | None = None) -> Iterator[None]:
        """Hold the cache's lock (``CacheBusy`` after ``wait`` seconds, ``LOCK_WAIT`` by default); a file
        rebuilt meanwhile is reopened."""
        if self._directory_fd is None or self._writing:
            yield
            return
        if not self._lock(LOCK_WAIT if wait is None else wait):
            raise CacheBusy(f"{self.path}: another turnmark is writing the workspace cache; try again when it is done")
        self._writing = True
        self._reopened = False
        try:
            if _inode(self._directory_fd) != self._inode:
                self._reopen()
                self._reopened = True
            yield
        finally:
            self._writing = False
            fcntl.flock(self._directory_fd, fcntl.LOCK_UN)

    def _reopen(self) -> None:
        assert self.path is not None
        assert self._directory_fd is not None
        self.connection.close()
        _check_files(self._directory_fd, self.path.parent)
        self.connection = _connect(str(self.path))
        _configure(self.connection)
        problem = schema_problem(self.connection)
        if problem is not None:
            self.connection.close()
            _remove_files(self._directory_fd)
            _check_files(self._directory_fd, self.path.parent)
            self.connection = _connect(str(self.path))
            _configure(self.connection)
            self.notes.append(self._rebuilt(problem))
        if _version(self.connection) is None:
            create_schema(self.connection)
            self.created = True
        self._inode = _inode(self._directory_fd)

    def rebuild(self, why: str) -> None:
        """Remove the file and start an empty one (under the lock), with a note saying ``why``."""
        if self._directory_fd is None:
            raise sqlite3.DatabaseError(why)
        with self.writing():
            if self._reopened:
                return
            self.connection.close()
            _remove_files(self._directory_fd)
            self._reopen()
        self.notes.append(self._rebuilt(why))

    def _rebuilt(self, why: str) -> str:
        return f"the workspace cache {self.path} could not be used ({why}); it was built again"

    def guarded(self, action: Callable[[], T]) -> T:
        """Run ``action``; when SQLite finds the file damaged, build it again and run ``action`` once more."""
        try:
            return action()
        except sqlite3.DatabaseError as error:
            reraise_interrupt(error)
            if not damaged(error) or self.path is None:
                raise
            self.rebuild(str(error))
            return action()


class _NotUtf8:
    """A stored text value that is not UTF-8: of no type turnmark writes, so the row holding it is refused."""

    def __repr__(self) -> str:
        return "NOT_UTF8"


NOT_UTF8 = _NotUtf8()


def _text_or_refused(data: bytes) -> str | _NotUtf8:
    try:
        return data.decode()
    except UnicodeDecodeError:
        return NOT_UTF8


def fetched(connection: sqlite3.Connection, query: str, values: Sequence[object] = ()) -> list[Any]:
    """The rows of ``query``. Python's ``sqlite3`` refuses a whole query when one text value is not UTF-8 (only a
    crafted or damaged file holds one: turnmark writes such text as bytes), so it is asked again with each such
    value read as ``NOT_UTF8``: the reader's type checks then refuse just those rows, which are read again and
    replaced."""
    try:
        return connection.execute(query, values).fetchall()
    except sqlite3.OperationalError as error:
        if "decode to UTF-8" not in str(error):
            raise
        before = connection.text_factory
        connection.text_factory = _text_or_refused
        try:
            return connection.execute(query, values).fetchall()
        finally:
            connection.text_factory = before


@contextlib.contextmanager
def batch(connection: sqlite3.Connection) -> Iterator[Callable[[], None]]:
    """One write transaction for many rows; call the yielded ``checkpoint`` to commit what is done so far."""
    connection.execute("BEGIN IMMEDIATE")

    def checkpoint() -> None:
        connection.execute("COMMIT")
        connection.execute("BEGIN IMMEDIATE")

    try:
        yield checkpoint
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def fts5_available() -> bool:
    """Whether this Python's SQLite has the FTS5 full-text index ``find`` needs."""
    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE probe USING fts5(text)")
    except sqlite3.OperationalError:
        return False
    finally:
        connection.close()
    return True


def memory_cache() -> CacheDb:
    """A cache that lives for this process only (when the file cannot be used)."""
    connection = _connect(":memory:")
    create_schema(connection)
    return CacheDb(connection, None, None)


def open_cache(workspace: Workspace, *, create: bool = True) -> CacheDb | None:
    """The workspace's cache database, built when missing (``None`` then, unless ``create``).

    ``FileFault`` (one line) when its folder or a file of it is a link or cannot be opened.
    """
    path = cache_path(workspace)
    if not create and not os.path.lexists(path):
        return None
    anchor = state_dirs.anchor(path)
    directory_fd = open_directory(path.parent, anchor, create=create, target=path, mode=state_dirs.PRIVATE)
    try:
        _check_files(directory_fd, path.parent)
        db = CacheDb(_connect(str(path)), path, directory_fd)
    except BaseException:
        os.close(directory_fd)
        raise
    db.notes.extend(state_dirs.leftovers(workspace))
    state_dirs.claim(path.parent, workspace.root)
    pruning.now_and_then()
    try:
        _configure(db.connection)
        problem = schema_problem(db.connection)
        if problem is not None:
            db.rebuild(problem)
            return db
        version = _version(db.connection)
    except sqlite3.DatabaseError as error:
        reraise_interrupt(error)
        if not damaged(error):
            db.close()
            raise
        db.rebuild(str(error))
        return db
    if version is None:
        with db.writing():
            if _version(db.connection) is None:
                create_schema(db.connection)
                db.created = True
    elif version != SCHEMA_VERSION:
        db.rebuild(f"schema version {version}, this turnmark uses {SCHEMA_VERSION}")
    return db
