"""The live-training tutorial run to its end after its dashboard's Start was pressed, with the cell that calls
`session.start()` run too (the tutorial says "press Start, or run the next cell"): no traceback, every check passes."""

import json

from execnb.nbio import dict2nb
from execnb.shell import CaptureShell

from conftest import ROOT


def test_tutorial_with_start_pressed_and_the_start_cell_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    nb = json.loads((ROOT / "nbs" / "tutorial.live_training.ipynb").read_text())
    at = next(i for i, c in enumerate(nb["cells"]) if "session.dashboard(" in "".join(c["source"]))
    source = "dash._on_start()   # what the Start button does\nassert session.status in ('starting', 'running')"
    press = {
        "cell_type": "code",
        "execution_count": None,
        "id": "press",
        "metadata": {},
        "outputs": [],
        "source": source,
    }
    nb["cells"].insert(at + 1, press)
    nb, shell = dict2nb(nb), CaptureShell()
    shell.run_all(nb, exc_stop=True)  # raises the first cell's error
    said = [o for c in nb.cells for o in c.get("outputs", [])]
    text = "\n".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", "")) for o in said)
    assert "Traceback" not in text and "has started already" in text, text[-3000:]
    assert not [o for o in said if o.get("output_type") == "error"]
    assert shell.user_ns["session"].status == "finished"
