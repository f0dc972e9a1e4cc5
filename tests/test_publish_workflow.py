"""The publishing workflow publishes only what CI's own script built and tested (architecture review,
finding 24: it published without running the tests; its build step had drifted to the quick start's
first line, which only makes the venv)."""

import yaml

from conftest import REPO_ROOT

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "publish.yml"


def test_publish_builds_and_tests_with_ci_run_before_uploading():
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"]["build"]["steps"]
    runs = [i for i, s in enumerate(steps) if s.get("run", "").strip() == "bash .ci/run"]
    upload = [i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/upload-pages-artifact")]
    assert runs and upload and runs[0] < upload[0], steps
    # nothing else builds the site: the one build is the one the tests ran against
    assert not [s for s in steps if "amp_docs_lib build" in s.get("run", "") or "mkdocs build" in s.get("run", "")]
