"""The package index comes from pip's configuration; credentials never show."""

from __future__ import annotations

import os

import pytest

from srcreview.core.errors import SourceUnavailable
from srcreview.source.pipindex import index_url, redact_url


@pytest.fixture
def no_pip_env(monkeypatch):
    for key in list(os.environ):
        if key.startswith("PIP_"):
            monkeypatch.delenv(key)


def test_pip_index_url_wins(no_pip_env, monkeypatch, tmp_path):
    conf = tmp_path / "pip.conf"
    conf.write_text("[global]\nindex-url = http://config.invalid/simple\n")
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    monkeypatch.setenv("PIP_INDEX_URL", "http://env.invalid/simple/")
    assert index_url() == "http://env.invalid/simple"


@pytest.mark.parametrize("text, expected", [
    ("[global]\nindex-url = http://global.invalid/simple\n", "http://global.invalid/simple"),
    ("[global]\nindex-url = http://global.invalid/simple\n[install]\nindex-url = http://install.invalid/s\n",
     "http://install.invalid/s"),
    ("[install]\nindex-url = http://install.invalid/s\n[download]\nindex-url = http://download.invalid/s\n",
     "http://download.invalid/s"),
])
def test_pip_configuration_is_read_through_pip(no_pip_env, monkeypatch, tmp_path, text, expected):
    conf = tmp_path / "pip.conf"
    conf.write_text(text)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    assert index_url() == expected


def test_default_is_pips_own(no_pip_env, monkeypatch):
    from pip._internal.models.index import PyPI

    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    assert index_url() == PyPI.simple_url.rstrip("/")


def test_non_http_index_is_refused_without_credentials(no_pip_env, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", "file://user:hunter2@localhost/simple")
    with pytest.raises(SourceUnavailable, match=r"only http\(s\) indexes") as info:
        index_url()
    assert "hunter2" not in info.value.message and "user" not in info.value.message


@pytest.mark.parametrize("url, shown", [
    ("https://user:pw@example.invalid:8443/simple", "https://***@example.invalid:8443/simple"),
    ("https://token@example.invalid/simple", "https://***@example.invalid/simple"),
    ("https://example.invalid/simple", "https://example.invalid/simple"),
    ("https://example.invalid/simple?token=abc", "https://example.invalid/simple?***"),
    ("http://user:pw@example.invalid:notaport/simple", "http://***@example.invalid:notaport/simple"),
    ("http://user:p@ss@example.invalid/simple", "http://***@example.invalid/simple"),
    ("http://user:pw@[::1/simple", "<unparsable URL>"),
])
def test_redact_url(url, shown):
    assert redact_url(url) == shown
