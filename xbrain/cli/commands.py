"""The store commands: parse arguments, call the library, print JSON."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from . import (
    cache_dir,
    cli,
    common_options,
    emit,
    open_store,
    quiet_network_libraries,
    store_path,
)

__all__: list[str] = []


def _read_input(source: str) -> Any:
    from ..inputs import read_json_input

    return read_json_input(sys.stdin.buffer if source == "-" else Path(source))


@cli.command()
@common_options
@click.pass_context
def init(ctx: click.Context) -> None:
    """Create the store (a private git repository) if it does not exist."""
    emit(open_store(ctx).init())


@cli.command()
@click.argument("file", metavar="FILE|-")
@common_options
@click.pass_context
def put(ctx: click.Context, file: str) -> None:
    """Add or update resources from a JSON file (or - for stdin).

    FILE holds one complete resource or an array of 1–1,000 (at most 10 MiB). An update
    is a full replacement and needs a strictly newer updatedAt; unknown fields are
    dropped and counted in droppedFields. Unknown purpose/useWhen/limitations stay
    empty and an unknown savedReason stays null. Identity is source.provider plus
    source.id. Nothing is written unless the whole batch is valid.
    """
    store = open_store(ctx)
    emit(store.put(_read_input(file)))


@cli.command()
@click.argument("resource_id", metavar="ID")
@common_options
@click.pass_context
def get(ctx: click.Context, resource_id: str) -> None:
    """Print one resource. Prints private content to stdout."""
    emit(open_store(ctx).get(resource_id))


@cli.command()
@click.argument("resource_id", metavar="ID")
@common_options
@click.pass_context
def inspect(ctx: click.Context, resource_id: str) -> None:
    """Print a resource with its resourceRevision (needed by analyze). Private content."""
    emit(open_store(ctx).inspect(resource_id))


@cli.command()
@click.argument("file", metavar="FILE|-")
@common_options
@click.pass_context
def analyze(ctx: click.Context, file: str) -> None:
    """Attach a visual design analysis: {id, resourceRevision, design} from FILE or -.

    resourceRevision must come from `xbrain inspect`; a changed resource is refused.
    """
    store = open_store(ctx)
    emit(store.analyze(_read_input(file)))


@cli.command()
@click.argument("resource_id", metavar="ID")
@common_options
@click.pass_context
def delete(ctx: click.Context, resource_id: str) -> None:
    """Delete a resource locally, leaving a tombstone.

    The tombstone stops capture and pull from resurrecting it; a later put restores it
    only with an updatedAt newer than the deletion. Remote copies stay until an explicit
    sync.
    """
    emit(open_store(ctx).delete(resource_id))


@cli.command()
@click.argument("query", metavar="QUERY")
@click.option("--limit", type=int, default=5, show_default=True, help="Results, 1–20.")
@click.option("--domain", help="Only analyzed designs in this domain (e.g. web-ui).")
@click.option("--feature", help="Only analyzed designs with a feature value/kind containing this.")
@click.option("--style", help="Only analyzed designs with a style label containing this.")
@click.option("--at", "at", metavar="REV", help="Search the store as it was at a commit.")
@click.option(
    "--provider-config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also ask this personal provider and merge its candidates (local wins).",
)
@click.option(
    "--brief",
    is_flag=True,
    help="Each result as {brief: id, title, purpose, useWhen, limitations, snippet} "
    "instead of the whole resource (a 300-character snippet around the first match).",
)
@common_options
@click.pass_context
def search(
    ctx: click.Context,
    query: str,
    limit: int,
    domain: str | None,
    feature: str | None,
    style: str | None,
    at: str | None,
    provider_config: Path | None,
    brief: bool,
) -> None:
    """Find resources for QUERY (English, Chinese or mixed). Prints private content.

    Results need a positive score and at least 35% of the query's terms; ranking is
    BM25F over title, purpose, useWhen and analyzed design labels (weight 4), summary
    (2) and text (1). QUERY may be "" when a design filter is given, or - to read it
    from stdin (UTF-8). Each result carries a citation {id, url, updatedAt}: cite the
    original URL.
    """
    from ..search import query as search_query

    found = search_query.search_store(
        store_path(ctx),
        cache_dir(),
        search_query.read_query(sys.stdin.buffer) if query == "-" else query,
        limit=limit,
        domain=domain,
        feature=feature,
        style=style,
        at=at,
        provider_config=provider_config,
    )
    emit(search_query.brief(found) if brief else found)


@cli.command()
@common_options
@click.pass_context
def reindex(ctx: click.Context) -> None:
    """Rebuild the search index from the committed resources (it is derived data)."""
    emit(open_store(ctx).reindex())


PROVIDER_OPTION = click.option(
    "--provider-config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="A personal provider config (kind file or command); see README.",
)


@cli.command()
@PROVIDER_OPTION
@common_options
@click.pass_context
def status(ctx: click.Context, provider_config: Path | None) -> None:
    """Which store, whether it exists, counts of resources, tombstones and pending work.

    With --provider-config, also the sync state with that provider.
    """
    store = open_store(ctx)
    provider = store.provider(provider_config) if provider_config else None
    emit(store.status(provider))


@cli.command()
@click.option("--id", "rid", metavar="ID", help="Send one resource (or its deletion).")
@click.option("--all", "everything", is_flag=True, help="Send everything not yet confirmed.")
@PROVIDER_OPTION
@common_options
@click.pass_context
def sync(
    ctx: click.Context, rid: str | None, everything: bool, provider_config: Path | None
) -> None:
    """Send resources and deletions to a personal provider you chose explicitly.

    Only a provider's confirmation records a receipt (committed in receipts/); entries
    already confirmed are skipped, resources queued for distillation are held back, and
    failures are listed while the rest continue. Exits 1 when anything failed or was
    held back; the JSON result is printed either way.
    """
    store = open_store(ctx)
    provider = store.provider(provider_config) if provider_config else None
    result = store.sync(provider, rid=rid, everything=everything)
    emit(result)
    if result["failures"] or result["skippedPending"]:
        ctx.exit(1)


@cli.command()
@click.option("--repair", is_flag=True, help="Fix what can be fixed safely (takes the lock).")
@common_options
@click.pass_context
def doctor(ctx: click.Context, repair: bool) -> None:
    """Check records, catalog, working tree, permissions and git objects."""
    result = open_store(ctx).doctor(repair=repair)
    emit(result)
    if not result["ok"]:
        ctx.exit(7)


@cli.command("import-store")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@common_options
@click.pass_context
def import_store(ctx: click.Context, file: Path) -> None:
    """Import an original single-file JSON store (version 1) into an empty store."""
    emit(open_store(ctx).import_store(file))


@cli.command("export-store")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
@common_options
@click.pass_context
def export_store(ctx: click.Context, file: Path, force: bool) -> None:
    """Write the store as an original single-file JSON store (private content, 0600)."""
    emit(open_store(ctx).export_store(file, force=force))


@cli.command()
@click.argument("key", required=False)
@click.argument("value", required=False)
@common_options
@click.pass_context
def config(ctx: click.Context, key: str | None, value: str | None) -> None:
    """Show the store's settings, or set KEY to VALUE (one commit).

    \b
    Keys: identity.name, identity.email   the commit author (default xbrain)
          limits.maxEntries, limits.maxBytes  raise the store's limits
    """
    emit(open_store(ctx).config(key, value))


class _Progress:
    """A progress bar on stderr, only when stderr is a terminal; made on first use."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None

    def __call__(self, step: int, total: int) -> None:
        if not sys.stderr.isatty():
            return
        if self.bar is None:
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr)
        self.bar.update(step)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.render_finish()


@cli.command()
@click.option(
    "--bookmarks",
    "bookmarks",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The gallery bookmark library (version 1 JSON); it is only read.",
)
@click.option("--skip-invalid", is_flag=True, help="Capture the valid rows; report the others.")
@common_options
@click.pass_context
def capture(ctx: click.Context, bookmarks: Path | None, skip_invalid: bool) -> None:
    """Capture a bookmark library as provider-x resources (local only, no network).

    Existing distillation and titles are kept, text is refreshed (a change is flagged
    for review), deleted resources are not resurrected, and the library file is never
    written. A row that cannot become a resource fails the capture, unless
    --skip-invalid (then it is listed under "invalid" and the exit status is 1).
    """
    if bookmarks is None:
        raise click.UsageError(
            "Capture requires --bookmarks FILE; no library is selected automatically."
        )
    store = open_store(ctx)
    progress = _Progress("capture")
    try:
        result = store.capture(bookmarks, skip_invalid=skip_invalid, progress=progress)
    finally:
        progress.finish()
    emit(result)
    if result.get("invalid"):
        ctx.exit(1)


@cli.command()
@click.option(
    "--source-config",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The authorized source adapter config (kind command, scope personal).",
)
@click.option("--max-pages", type=int, default=10, show_default=True, help="Page budget, 1–100.")
@click.option(
    "--restart", is_flag=True, help="Drop an unfinished cursor (keeps data and the checkpoint)."
)
@common_options
@click.pass_context
def pull(ctx: click.Context, source_config: Path | None, max_pages: int, restart: bool) -> None:
    """Pull new or changed items page by page from a source adapter you chose.

    Each page is one commit; a failed or paused pull resumes from its stored cursor
    when run again. Changed resources join the distillation queue (see pending).
    Exits 1 when the pull failed; the JSON result is printed either way.
    """
    if source_config is None:
        raise click.UsageError("Select an authorized source adapter with --source-config.")
    store = open_store(ctx)
    progress = _Progress("pull")
    try:
        result = store.pull(source_config, max_pages=max_pages, restart=restart, progress=progress)
    finally:
        progress.finish()
    emit(result)
    if result["state"] == "failed":
        ctx.exit(1)


@cli.command("list")
@click.option(
    "--limit", type=int, default=20, show_default=True, help="Resources to show, 1–1,000."
)
@click.option("--since", metavar="TIME", help="Only resources updated at or after TIME (ISO 8601).")
@click.option("--provider", metavar="P", help="Only resources whose source.provider is P.")
@common_options
@click.pass_context
def list_command(ctx: click.Context, limit: int, since: str | None, provider: str | None) -> None:
    """Browse resources, newest updatedAt first, as brief records. Prints private content.

    Each item: id, title, purpose, useWhen, limitations, updatedAt and source
    {provider, url}; "total" counts every match. xbrain get ID shows one in full.
    """
    emit(open_store(ctx).list(limit=limit, since=since, provider=provider))


@cli.command()
@click.option("--limit", type=int, default=20, show_default=True, help="Items to show, 1–100.")
@common_options
@click.pass_context
def pending(ctx: click.Context, limit: int) -> None:
    """Resources waiting for distillation, with the revisions distill needs. Private content."""
    emit(open_store(ctx).pending(limit))


@cli.command()
@click.argument("file", metavar="FILE|-")
@common_options
@click.pass_context
def distill(ctx: click.Context, file: str) -> None:
    """Apply distillations: {id, sourceRevision, resourceRevision, summary, purpose,
    useWhen, limitations} (or an array of 1–100) from FILE or -.

    The revisions come from `xbrain pending`; a resource that changed since is refused.
    savedReason, title, text and source cannot be changed this way.
    """
    store = open_store(ctx)
    emit(store.distill(_read_input(file)))


@cli.command()
@click.argument("resource_id", metavar="[ID]", required=False)
@click.option("--limit", type=int, default=20, show_default=True, help="Commits to list, 1–1,000.")
@common_options
@click.pass_context
def log(ctx: click.Context, resource_id: str | None, limit: int) -> None:
    """Commits of the store (or of one resource), newest first: who changed what, when."""
    emit(open_store(ctx).log(resource_id, limit))


@cli.command()
@click.argument("resource_id", metavar="ID")
@click.option("--at", "at", metavar="REV", required=True, help="A commit id (or prefix), main~N.")
@common_options
@click.pass_context
def show(ctx: click.Context, resource_id: str, at: str) -> None:
    """A resource as it was at a revision. Prints private content."""
    emit(open_store(ctx).show(resource_id, at))


@cli.command()
@click.argument("resource_id", metavar="ID")
@click.argument("revisions", metavar="[REV [REV]]", nargs=-1)
@common_options
@click.pass_context
def diff(ctx: click.Context, resource_id: str, revisions: tuple[str, ...]) -> None:
    """Field-level and line-level changes of a resource between two revisions.

    No REV: its last change. One REV: from REV to now. Two: from the first to the second.
    """
    if len(revisions) > 2:
        raise click.UsageError("Give at most two revisions.")
    old = revisions[0] if revisions else None
    new = revisions[1] if len(revisions) == 2 else None
    if old is not None and new is None:
        new = "main"
    emit(open_store(ctx).diff(resource_id, old, new))


@cli.command()
@click.argument("resource_id", metavar="ID")
@click.option("--at", "at", metavar="REV", required=True, help="The revision to bring back.")
@common_options
@click.pass_context
def restore(ctx: click.Context, resource_id: str, at: str) -> None:
    """Write a resource's content from a past revision as a new revision.

    History is never rewritten; a deleted resource comes back the same way.
    """
    emit(open_store(ctx).restore(resource_id, at))


@cli.group()
def remote() -> None:
    """Git remotes for backups and other devices (only ones you add; never implicit).

    URLs may be paths, file://, ssh://, git:// or https://; credentials come from your
    ssh agent or git credential helper, never from xbrain.
    """
    quiet_network_libraries()


@remote.command("add")
@click.argument("name")
@click.argument("url")
@common_options
@click.pass_context
def remote_add(ctx: click.Context, name: str, url: str) -> None:
    """Add a remote NAME at URL."""
    emit(open_store(ctx).remote_add(name, url))


@remote.command("list")
@common_options
@click.pass_context
def remote_list(ctx: click.Context) -> None:
    """List the remotes."""
    emit(open_store(ctx).remote_list())


@remote.command("remove")
@click.argument("name")
@common_options
@click.pass_context
def remote_remove(ctx: click.Context, name: str) -> None:
    """Forget remote NAME (the remote itself is untouched)."""
    emit(open_store(ctx).remote_remove(name))


@remote.command("push")
@click.argument("name", default="origin")
@common_options
@click.pass_context
def remote_push(ctx: click.Context, name: str) -> None:
    """Push main to NAME (default origin); refused when NAME has commits you lack."""
    emit(open_store(ctx).remote_push(name))


@remote.command("pull")
@click.argument("name", default="origin")
@common_options
@click.pass_context
def remote_pull(ctx: click.Context, name: str) -> None:
    """Fetch NAME and fast-forward, or merge per resource (newer wins; never conflict markers).

    Everything the remote sends is checked first (paths, file kinds, sizes, records);
    a refused remote changes nothing. "dropped" lists every id where the merge kept one
    device's revision over the other's (still in history: xbrain show / restore).
    """
    emit(open_store(ctx).remote_pull(name))


@remote.command("verify")
@click.argument("name", default="origin")
@common_options
@click.pass_context
def remote_verify(ctx: click.Context, name: str) -> None:
    """Clone NAME aside and check every object, record and the catalog."""
    result = open_store(ctx).remote_verify(name)
    emit(result)
    if not result["ok"]:
        ctx.exit(7)


@cli.command("clone")
@click.argument("url")
@click.argument("directory", type=click.Path(path_type=Path, file_okay=False))
@common_options
def clone_command(url: str, directory: Path) -> None:
    """Restore a store from URL into DIRECTORY (e.g. a backup on a new machine)."""
    from ..store import clone

    quiet_network_libraries()
    emit(clone(url, directory))


@cli.command()
@common_options
@click.pass_context
def adopt(ctx: click.Context) -> None:
    """Validate and commit hand edits of record files in the working tree.

    Valid files are committed in canonical form; invalid ones are listed under
    "rejected" (exit 1) and left untouched.
    """
    result = open_store(ctx).adopt()
    emit(result)
    if result["rejected"]:
        count = len(result["rejected"])
        click.echo(f'{count} file(s) rejected and left alone; see "rejected".', err=True)
        ctx.exit(1)


@cli.command("mcp")
@common_options
@click.pass_context
def mcp_command(ctx: click.Context) -> None:
    """Serve the store to an MCP client over stdio (needs: pip install 'xbrain[mcp]').

    Tools: search, get, status (read-only), put, delete. The store is fixed at start-up
    (--store, else $XBRAIN_STORE, else the default); a client cannot choose another.
    Errors come back as tool errors with the CLI's messages. There is no sync or push
    tool: sending data off the machine stays an explicit command of yours. A busy store
    is waited for up to --wait seconds (default 5 here). Logs go to stderr only.
    """
    from ..mcp_server import Tools, serve
    from . import Settings, show_tracebacks

    settings = ctx.ensure_object(Settings)
    store = open_store(ctx)
    wait = settings.wait if settings.wait is not None else 5.0
    tools = Tools(store.path, store.cache_dir, wait=wait, agent=store.agent)
    if sys.stdin.isatty():  # started by hand rather than by an MCP client
        click.echo(f"xbrain mcp: serving {store.path} over stdio; Ctrl-C to stop.", err=True)
    serve(tools, show_tracebacks=show_tracebacks(ctx))
