"""The docs site and the README, from the notebooks (`workbench.docs.site`).

    python tools/docs.py build [--workers 2] [--out _docs]   # run the notebooks that changed, build the site (mkdocs, strict)
    python tools/docs.py build --fresh                       # run every notebook (what `make test` does)
    python tools/docs.py readme [--check]                     # write README.md from nbs/index.ipynb (or only compare)
    python tools/docs.py serve [--port 8000]                  # serve the built site on 127.0.0.1 (its 404 page too)

`make docs`, `make readme` and `make docs-serve` call these; `make test` calls `build --fresh` in place of `nbdev_test`.
`build` keeps each executed notebook in `_docs_cache/`, keyed by its cells and the package's source: a notebook whose
cells and package are the same as last time is not run again (its outputs are reused).
"""

import argparse, functools, http.server, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    "The built site's files; a page that is not there gets the site's own 404 page (mkdocs writes 404.html)."

    def send_error(self, code, message=None, explain=None):
        page = Path(self.directory) / "404.html"
        if code != 404 or not page.is_file():
            return super().send_error(code, message, explain)
        body = page.read_bytes()
        self.send_response(404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def log_message(self, *args):  # (one line a request is noise in the terminal)
        pass


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="run every notebook and build the site")
    b.add_argument("--workers", type=int, default=2, help="notebooks run at once (default 2)")
    b.add_argument("--out", default=str(ROOT / "_docs"), help="the site's folder (default _docs/)")
    b.add_argument("--fresh", action="store_true", help="run every notebook, reusing no outputs from _docs_cache/")
    r = sub.add_parser("readme", help="write README.md from nbs/index.ipynb")
    r.add_argument("--check", action="store_true", help="only say whether README.md is current (exit 1 if not)")
    s = sub.add_parser("serve", help="serve the built site on 127.0.0.1")
    s.add_argument("--port", type=int, default=8000)
    a = p.parse_args()
    if a.command == "build" and a.workers < 1:
        print("tools/docs.py: --workers must be at least 1", file=sys.stderr)
        return 2
    import warnings

    warnings.filterwarnings(
        "ignore", message="GRPO from an untrained tiny model"
    )  # (the pages' examples make such configs)
    from workbench.core import atomic_write_text
    from workbench.docs.site import DocsError, build_site, readme_markdown

    if a.command == "build":
        try:
            build_site(ROOT, Path(a.out), n_workers=a.workers, cache=None if a.fresh else ROOT / "_docs_cache")
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
    handler = functools.partial(SiteHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", a.port), handler) as httpd:
        print(f"serving _docs/ on http://127.0.0.1:{httpd.server_address[1]}/ (Ctrl-C stops)", flush=True)
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
