"""Credentials taken out of what skewless shows or keeps: every URL, wherever it is printed or written.

A database URL may carry a password (`postgresql://user:secret@host/db`, or `?password=secret`). Errors,
quarantine files, the run's config.yaml, report.html, progress lines and `inspect` show a URL through
`url_without_credentials` (one URL) or `without_credentials` (any text), never as given.

What is cut is chosen to leak nothing even from a URL a driver would misread: the user information runs to the
*last* "@" (a raw "@", "/", "#" or "%zz" in a password is still cut whole), and the password parameters
(`password=`, `sslpassword=`, their keys compared percent-decoded as libpq reads them: `pass%77ord=`) go before
that "@" is looked for, so an "@" inside one cannot be taken for the end of the user information. The URL that
remains still works where the password comes from elsewhere (libpq's PGPASSWORD, a service file, ~/.pgpass:
docs/recipes/sql.md). Runner options named for a credential (`options_without_credentials`) are not kept either.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

# the parameters holding secrets: libpq's (the PostgreSQL URL's query string and its key=value form)
_SECRET_PARAMETERS = ("password", "sslpassword")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://")
# in a text: a URL runs to the next space or quote
_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]*")
# a query parameter: libpq percent-decodes its key too (`?pass%77ord=` is a password), so keys are compared decoded
_PARAMETER = re.compile(r"([?&])([^=&?#]*)=([^&]*)")
# libpq's key=value connection strings: password=secret or password='a secret'
_KEY_VALUE = re.compile(r"\b((?:%s)\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)" % "|".join(_SECRET_PARAMETERS),
                        re.IGNORECASE)
# Beam options that hold a credential, by name (S3's access key, secret and session token, Azure's connection
# string, any *password*, *secret*, *_token, *credential(s), *private_key, *api_key): given in `runner.options`
# they reach the pipeline but are never kept or shown; in a text, `name: value` / `name=value` loses its value
_SECRET_OPTION_NAME = (r"[A-Za-z0-9_.-]*(?:secret|password|passwd|_token(?!s)|credentials?|connection_string"
                       r"|access_key|private_key|api_key)[A-Za-z0-9_]*")
_SECRET_OPTION = re.compile(rf"^{_SECRET_OPTION_NAME}$", re.IGNORECASE)
# YAML's `name: value`, a flag's `--name=value`, a dict's `'name': 'value'`
_SECRET_OPTION_IN_TEXT = re.compile(
    rf"(?<![\w.-])({_SECRET_OPTION_NAME}['\"]?(?:=|:[ \t]*))(['\"]?[^\s,}}'\"]+['\"]?)", re.IGNORECASE)
# schemes of local files, whose "user information" would be a path
_LOCAL_SCHEMES = ("duckdb", "file")


def url_without_credentials(url: str) -> str:
    """`url` without the password of its user information and without password parameters; the user stays."""
    match = _SCHEME.match(url)
    if match is None or match.group(1).lower() in _LOCAL_SCHEMES:
        return _KEY_VALUE.sub(r"\1", url) if match is None else url
    rest = _PARAMETER.sub(_cut_secret_parameter, url[match.end():])
    rest = re.sub(r"[?&]$", "", rest).replace("?&", "?")
    user, _, location = _user_information(rest)
    if location is not None:
        rest = f"{user}@{location}" if user else location
    return match.group(0) + rest


def url_password(url: str) -> str:
    """The password of the URL's user information as written (percent-escapes and all), or ""."""
    return _user_information(url.split("://", 1)[-1])[1]


def url_secrets(url: str) -> tuple[str, ...]:
    """Every password the URL holds, as written and percent-decoded, longest first: what a driver's error message
    could quote back (libpq quotes a token it cannot read, "invalid percent-encoded token")."""
    found = {url_password(url), *(value for _, key, value in _PARAMETER.findall(url) if _secret_key(key))}
    found |= {unquote(secret) for secret in found}
    return tuple(sorted((secret for secret in found if secret), key=len, reverse=True))


def _user_information(rest: str) -> tuple[str, str, str | None]:
    """(user, password, what follows the user information) of a URL's part after "scheme://", which runs to its
    last "@" (None: there is no user information)."""
    userinfo, at, location = rest.rpartition("@")
    if not at:
        return "", "", None
    user, _, password = userinfo.partition(":")
    return user, password, location


def without_credentials(text: str) -> str:
    """`text` with every URL in it as `url_without_credentials` gives it, libpq's `password=...` cut, and the value
    of an option named for a credential (`s3_secret_access_key: ...`)."""
    text = _KEY_VALUE.sub(r"\1", _URL_IN_TEXT.sub(lambda url: url_without_credentials(url.group()), text))
    return _SECRET_OPTION_IN_TEXT.sub(r"\1", text)


def options_without_credentials(options: dict) -> dict:
    """Runner options without those named for a credential (`_SECRET_OPTION`): what a run keeps of them (its
    config.yaml; the job itself was given them all). A later command gets them where Beam looks for them otherwise
    (the environment: AWS_SECRET_ACCESS_KEY and the like) or on its command line after `--`."""
    return {name: value for name, value in options.items() if not _SECRET_OPTION.match(str(name))}


def _secret_key(key: str) -> bool:
    return unquote(key).strip().lower() in _SECRET_PARAMETERS


def _cut_secret_parameter(parameter: re.Match) -> str:
    # "?password=x&a=1" keeps "?a=1" (the "?&" left is closed up by the caller); "&password=x" goes whole
    if not _secret_key(parameter.group(2)):
        return parameter.group(0)
    return parameter.group(1) if parameter.group(1) == "?" else ""
