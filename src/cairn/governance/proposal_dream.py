"""A dream in approval mode: its decisions become ONE proposal, approved or rejected as a whole.

When proposed, each decision is parsed and planned against the scope as it is now (the same
``decisions.parse`` and ``dream.plan`` as a direct apply), which gives the person a diff per
decision and the agent the decisions that would fail. Approval applies the decisions as the
model sent them, with the revs of its load (``dream.apply``): a section a person changed since
fails that decision with ``rev-conflict`` and the others still apply.
"""

from __future__ import annotations

from typing import Any

from ..errors import CairnError
from . import decisions, dream, dream_config, proposals
from .decisions import Invalid
from .files import Place, RevConflict, read_bytes
from .proposals import Proposal


def propose(place: Place, raw_decisions: Any, summary: str, *, via: str) -> dict[str, Any]:
    """Plan ``raw_decisions`` and leave them as one proposal; returns the agent's answer with
    ``results`` (each decision ``proposed``, or ``failed`` with its reason as apply would give).

    Raises what ``dream.apply`` raises before applying anything (DreamOff, InvalidInput,
    SecretRefused); nothing is proposed then.
    """
    dream_config.require_on(place)
    summary = dream.checked_batch(raw_decisions, summary)
    results: list[dict[str, Any]] = []
    diffs: list[str] = []
    for index, raw in enumerate(raw_decisions):
        result: dict[str, Any] = {
            "index": index,
            "kind": decisions.kind_of(raw),
            "status": "proposed",
            "reason": None,
        }
        try:
            changes, described = dream.plan(place, decisions.parse(raw), None)
            result["target"] = described
            diffs.append(f"# decision #{index} {result['kind']}: {described}\n")
            for change in changes:
                before = read_bytes(place.vault, change.path) or b""
                after = change.data or b""
                diffs.append(
                    proposals.unified(
                        before.decode("utf-8", "replace"), after.decode("utf-8", "replace"), change.path
                    )
                )
        except RevConflict as exc:
            result.update(status="failed", reason=dream.REV_CONFLICT, detail=exc.message, target=exc.path)
        except Invalid as exc:
            result.update(status="failed", reason=exc.reason)
        except CairnError as exc:
            result.update(status="failed", reason=exc.message)
        results.append(result)
    proposed = sum(r["status"] == "proposed" for r in results)
    proposal = proposals.create(
        place,
        kind="dream",
        target=place.folder,
        version=None,
        via=via,
        diff="".join(diffs),
        summary=(summary.split("\n", 1)[0][:200] or f"a dream of {len(results)} decisions"),
        extra={"decisions": raw_decisions, "summary": summary, "planned": results},
    )
    return proposals.answer(proposal) | {
        "results": results,
        "proposed": proposed,
        "applied": 0,  # nothing until a person approves
        "failed": len(results) - proposed,
    }


def commit(place: Place, proposal: Proposal) -> dict[str, Any]:
    """Apply an approved dream proposal's decisions, each checked against its rev; the caller
    holds the write lock. A decision that fails is reported; the proposal is still approved."""
    raw = proposal.extra.get("decisions")
    summary = str(proposal.extra.get("summary") or "")
    report = dream.apply(place, raw, summary, trigger=f"proposal {proposal.id}", check_on=False)
    return {
        "results": report["results"],
        "applied": report["applied"],
        "failed": report["failed"],
        "log": report["log"],
    }
