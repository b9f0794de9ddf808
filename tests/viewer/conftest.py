"""The browser fixtures of the viewer's browser tests: one Chromium per test session, a
fresh page per test that fails the test on any uncaught page error."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.viewer.helpers import browser_or_skip


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    playwright, browser = browser_or_skip()
    yield browser
    browser.close()
    playwright.stop()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    page = browser.new_page(viewport={"width": 960, "height": 540})
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    page.close()
    assert not errors, errors
