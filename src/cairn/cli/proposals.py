"""``cairn proposals list | show | approve | reject`` (approval mode, issue 35), and what
``cairn --as-agent`` changes: the Memory an agent's commands get, whose writes become proposals
when cairn.toml says ``write_mode = "propose"`` and which can never approve.

A thin face over ``Memory.proposals``, ``proposal``, ``approve`` and ``reject``; importing the
module registers the commands.
"""

from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from .common import (
    Command,
    Group,
    JsonOpt,
    Proposed,
    _emit,
    _emit_json,
    _guard,
    _memory,
    _rich_table,
    _settings,
    _short_time,
    _want_json,
    app,
)

if TYPE_CHECKING:
    from ..memory import Memory

NO_AGENT = "only a person approves or rejects a proposal: run this command without --as-agent"

proposals_app = typer.Typer(
    name="proposals",
    help='Changes an agent proposed in approval mode (write_mode = "propose"), waiting for a person.',
    no_args_is_help=True,
    rich_markup_mode=None,
)


class AgentMemory:
    """A Memory as an agent's command line sees it (``cairn --as-agent``): in approval mode
    write, append, edit, delete and dream apply become proposals (raised as ``Proposed``), and
    approving or rejecting is refused in any mode."""

    def __init__(self, memory: "Memory") -> None:
        self._memory = memory

    def __getattr__(self, name: str) -> Any:
        return getattr(self._memory, name)

    def _route(self, action: str, *args: Any, **kwargs: Any) -> Any:
        if self._memory.write_mode != "propose":
            return getattr(self._memory, action)(*args, **kwargs)
        raise Proposed(self._memory.propose(action, *args, via="cli", **kwargs))

    def write(self, title: str, **kwargs: Any) -> Any:
        return self._route("write", title, **kwargs)

    def append(self, permalink: str, line: str, **kwargs: Any) -> Any:
        return self._route("append", permalink, line, **kwargs)

    def edit(self, permalink: str, find: str, replace: str, **kwargs: Any) -> Any:
        return self._route("edit", permalink, find, replace, **kwargs)

    def delete(self, permalink: str, **kwargs: Any) -> Any:
        return self._route("delete", permalink, **kwargs)

    def dream_apply(self, decisions: Any, summary: str = "", **kwargs: Any) -> Any:
        report = self._memory.dream_apply(decisions, summary, **(kwargs | {"agent": True}))
        if "proposal" in report:
            raise Proposed(report)
        return report

    def approve(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse()

    def reject(self, *args: Any, **kwargs: Any) -> NoReturn:
        _refuse()


def _refuse() -> NoReturn:
    from ..errors import ApprovalRefused

    raise ApprovalRefused(NO_AGENT)


@proposals_app.command("list")
def list_proposals(
    ctx: typer.Context,
    status: Annotated[
        str | None,
        typer.Option(
            "--status", metavar="STATUS", help="Only pending, approved, rejected, conflicted or expired."
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """List proposals, newest first, with their status (pending ones past their expiry: expired)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        items = mem.proposals(status=status)
    if as_json:
        _emit_json(items)
        return
    if not items:
        _emit("no proposals", err=True)
        return
    from . import common

    if common._is_terminal():
        _rich_table(
            ["id", "status", "kind", "target", "by", "expires"],
            [
                [p["id"], p["status"], p["kind"], p["target"], p["by"], _short_time(p["expires"])]
                for p in items
            ],
            keep=frozenset({"id", "expires"}),
        )
        return
    _emit(
        "\n".join(
            "\t".join([p["id"], p["status"], p["kind"], p["target"], p["by"], p["expires"]]) for p in items
        )
    )


@proposals_app.command("show")
def show(
    ctx: typer.Context,
    proposal_id: Annotated[str, typer.Argument(metavar="ID", help="The proposal's id.")],
    json_out: JsonOpt = False,
) -> None:
    """Show one proposal: who asked, when, until when, and the diff (--json: also the full text)."""
    as_json = _want_json(ctx, json_out)
    with _memory(ctx, as_json) as mem:
        item = mem.proposal(proposal_id)
    if as_json:
        _emit_json(item)
        return
    _emit(f"proposal {item['id']}: {item['kind']} {item['target']} ({item['status']})")
    _emit(f"by {item['by']} via {item['via']} at {item['created']}; expires {item['expires']}")
    if item["summary"]:
        _emit(item["summary"])
    if item["decided"]:
        _emit(
            f"decided {item['decided']} by {item['decided_by']}" + (f": {item['why']}" if item["why"] else "")
        )
    _emit("")
    _emit(item["diff"].rstrip("\n"))


def _decided(ctx: typer.Context, as_json: bool, item: dict[str, Any], wanted: str) -> None:
    if as_json:
        _emit_json(item)
    again = " (decided before)" if item.get("again") else ""
    outcome = item.get("outcome") or {}
    if item["status"] == wanted:
        if not as_json:
            detail = outcome.get("written") or ""
            if "results" in outcome:
                detail = f"{outcome['applied']} decisions applied, {outcome['failed']} failed"
            _emit(f"{wanted} {item['id']}{again}" + (f": {detail}" if detail else ""))
        return
    reason = outcome.get("reason") or "nothing was written"
    _emit(f"error: proposal {item['id']} is {item['status']}{again}: {reason}", err=True)
    raise typer.Exit(1)


@proposals_app.command("approve")
def approve(
    ctx: typer.Context,
    proposal_id: Annotated[str, typer.Argument(metavar="ID", help="The proposal's id.")],
    json_out: JsonOpt = False,
) -> None:
    """Approve: write the change if its target is still as the proposal saw it, else it becomes
    conflicted and nothing is written. Exit status 1 unless the proposal ends approved."""
    as_json = _want_json(ctx, json_out)
    if _settings(ctx).as_agent:
        with _guard(as_json):
            _refuse()
    with _memory(ctx, as_json) as mem:
        item = mem.approve(proposal_id, by=f"{mem.origin} (cli)")
    _decided(ctx, as_json, item, "approved")


@proposals_app.command("reject")
def reject(
    ctx: typer.Context,
    proposal_id: Annotated[str, typer.Argument(metavar="ID", help="The proposal's id.")],
    why: Annotated[str | None, typer.Option("--why", metavar="TEXT", help="Why (kept in log.md).")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Reject: nothing is written; the decision and the reason go into the scope's log.md."""
    as_json = _want_json(ctx, json_out)
    if _settings(ctx).as_agent:
        with _guard(as_json):
            _refuse()
    with _memory(ctx, as_json) as mem:
        item = mem.reject(proposal_id, why, by=f"{mem.origin} (cli)")
    _decided(ctx, as_json, item, "rejected")


for _command in proposals_app.registered_commands:
    _command.cls = Command
app.add_typer(proposals_app, name="proposals", cls=Group)
