"""One headless Chromium for a test module, shared by its browser tests (starting Playwright's driver and a browser
takes seconds): each test opens its pages in a fresh context of its own (no cookies, storage or routes of another's).
A module imports `chromium_fixture` and its tests ask for `chromium` (pages: `conftest.loopback_page`)."""

import contextlib, os

import pytest

from conftest import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module", name="chromium")
def chromium_fixture():
    """Debian's Chromium, headless, for the module's tests, closed after its last. Playwright's sync API runs one at a
    time in a thread, so a module that uses this fixture opens no other (`loopback_only_page`, `offline_page`)."""
    assert os.path.exists(CHROMIUM), (
        "Debian's chromium is missing: tools/setup.sh installs it (apt-get install -y chromium)"
    )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def fresh_context(browser, **options):
    "A new context of `browser` (`options` as `browser.new_context` takes them), closed at the end."
    context = browser.new_context(**options)
    try:
        yield context
    finally:
        context.close()
