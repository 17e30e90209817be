import json
from tests.worker.test_worker_review import GADGETS

async def test_dbg(swarm):
    from agents.dispatch import WorkTask
    from agents.worker import run_worker
    pull = swarm.sandbox.state.pull(GADGETS, 1).pull
    findings = ({"path": "gadgets/plugins/plugin_17.py", "line": 3, "body": "TODO left in new code."},)
    task = WorkTask(kind="summarize", repo=GADGETS, number=1, head_sha=pull.head_sha, parent_findings=findings)
    outcome = await run_worker(await swarm.dispatch(task, role="summarizer"), swarm.runtime)
    s = swarm.runtime.scripted_model
    for r in s.responses:
        print("RESP", json.dumps(r["content"])[:700])
    print("TOOLS", [t["name"] for t in s.requests[0].get("tools", [])])
    print("LAST", json.dumps(s.requests[-1]["messages"][-1])[:1200])
