"""The service's settings check themselves: an API key that was asked for is never read as "no key"."""

import os

import pytest

from ktrain_recipes import RecipesError
from ktrain_recipes_tools.service.settings import ServiceSettings


@pytest.fixture
def no_env_key(monkeypatch):
    monkeypatch.delenv("KTRAIN_RECIPES_API_KEY", raising=False)


def test_a_key_file_gives_the_key(tmp_path, no_env_key):
    (tmp_path / "key").write_text("s3cret-key\n")
    assert ServiceSettings("p", api_key_file=str(tmp_path / "key")).api_key() == "s3cret-key"
    assert ServiceSettings("p").api_key() is None  # nothing asked: no key


@pytest.mark.parametrize("content, message", [
    (b"", "is empty"), (b"  \n", "is empty"), (b"caf\xc3\xa9", "printable ASCII"), (b"a\x00b", "printable ASCII"),
    (b"k" * 5000, "over 4 KB"),
])
def test_a_key_file_that_holds_no_usable_key_is_refused(tmp_path, no_env_key, content, message):
    (tmp_path / "key").write_bytes(content)
    with pytest.raises(RecipesError, match=message):
        ServiceSettings("p", api_key_file=str(tmp_path / "key")).api_key()


def test_an_empty_key_file_name_and_an_empty_variable_are_refused(monkeypatch):
    monkeypatch.delenv("KTRAIN_RECIPES_API_KEY", raising=False)
    with pytest.raises(RecipesError, match="names no file"):
        ServiceSettings("p", api_key_file="").api_key()
    monkeypatch.setenv("KTRAIN_RECIPES_API_KEY", "")
    with pytest.raises(RecipesError, match=r"\$KTRAIN_RECIPES_API_KEY is empty"):
        ServiceSettings("p").api_key()
    monkeypatch.setenv("KTRAIN_RECIPES_API_KEY", "from-the-environment")
    assert ServiceSettings("p").api_key() == "from-the-environment"


def test_a_key_file_that_is_a_fifo_is_refused_without_blocking(tmp_path, no_env_key):
    fifo = tmp_path / "key"
    os.mkfifo(fifo)  # opening it for reading would wait for a writer for ever
    with pytest.raises(RecipesError, match="not a regular file"):
        ServiceSettings("p", api_key_file=str(fifo)).api_key()


@pytest.mark.parametrize("settings, message", [
    ({"max_queue": 10, "max_batch": 64}, r"--max-queue \(10\) must be at least --max-batch \(64\)"),
    ({"cors_origin": "https://example.org/"}, "is not an origin"),
    ({"cors_origin": "example.org"}, "is not an origin"),
    ({"cors_origin": "https://example.org/app"}, "is not an origin"),
])
def test_settings_that_could_never_work_are_refused_where_written(settings, message):
    with pytest.raises(RecipesError, match=message):
        ServiceSettings("p", **settings)
    assert ServiceSettings("p", cors_origin="https://example.org, http://localhost:3000").origins() == [
        "https://example.org", "http://localhost:3000"]


def test_an_ipv6_host_is_written_in_brackets_in_a_url():
    from ktrain_recipes_tools.service.settings import url_host

    assert url_host("::") == "[::]" and url_host("::1") == "[::1]" and url_host("127.0.0.1") == "127.0.0.1"
