"`python -m bench NAME`: the benchmarks' one runner (`bench/runner.py`)."

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runner import main  # noqa: E402

sys.exit(main())
