"""The docs site and the README, from the notebooks (`workbench.docs.site`).

    python tools/docs.py build [--workers 2] [--out _docs]   # run every notebook, build the site (mkdocs, strict)
    python tools/docs.py readme [--check]                     # write README.md from nbs/index.ipynb (or only compare)
    python tools/docs.py serve [--port 8000]                  # serve the built site on 127.0.0.1

`make docs`, `make readme` and `make docs-serve` call these; `make test` calls `build` in place of `nbdev_test`.
"""

import argparse, functools, http.server, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="run every notebook and build the site")
    b.add_argument("--workers", type=int, default=2, help="notebooks run at once (default 2)")
    b.add_argument("--out", default=str(ROOT / "_docs"), help="the site's folder (default _docs/)")
    r = sub.add_parser("readme", help="write README.md from nbs/index.ipynb")
    r.add_argument("--check", action="store_true", help="only say whether README.md is current (exit 1 if not)")
    s = sub.add_parser("serve", help="serve the built site on 127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    a = p.parse_args()
    if a.command == "build" and a.workers < 1:
        print("tools/docs.py: --workers must be at least 1", file=sys.stderr)
        return 2
    from workbench.core import atomic_write_text
    from workbench.docs.site import DocsError, build_site, readme_markdown

    if a.command == "build":
        try:
            build_site(ROOT, Path(a.out), n_workers=a.workers)
        except DocsError as e:
            print(f"docs: {e}", file=sys.stderr)
            return 1
        return 0
    if a.command == "readme":
        text = readme_markdown(ROOT / "nbs" / "index.ipynb")
        if a.check:
            same = (ROOT / "README.md").read_text() == text
            print("README.md is current" if same else "README.md differs from nbs/index.ipynb: run `make readme`")
            return 0 if same else 1
        atomic_write_text(ROOT / "README.md", text)
        print(f"README.md written from nbs/index.ipynb ({len(text.splitlines())} lines)")
        return 0
    site = Path(ROOT / "_docs")
    if not (site / "index.html").exists():
        print("docs: no site in _docs/: run `make docs` first", file=sys.stderr)
        return 2
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", a.port), handler) as httpd:
        print(f"serving _docs/ on http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
