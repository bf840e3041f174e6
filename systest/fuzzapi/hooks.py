"""Schemathesis hooks of `make fuzz-api` (systest/fuzzapi/run.py sets the environment).

Every request carries the fresh account's valid credentials, whatever schemathesis
generated, so that no request counts as a failed authentication of this machine's address
(edge throttles an address after 20 failures: docs/limits.md; other people use the same
dev stack from it):

  interface-a  HTTP Basic plus the servicekey/servicepass headers (generated 365villaskey/
               365villaspass headers are dropped: edge would read them first otherwise);
  interface-b  key/pass put into every action body (JSON, form or multipart), the owner token
               into every read's path;
  admin        the Bearer admin token; every {id} is the fresh account's (never another's:
               ids are small numbers, the demo account's among them).

Some generated ids are swapped for the fresh account's real ones (its property, its
internal code) in half of the cases (chosen by a hash of the generated values, so that a case
replayed is the same), so that the cases reach past "not found".

Environment: FUZZAPI_DOC (interface-a, interface-b or admin), FUZZAPI_CREDS (a JSON file
written by run.py), FUZZAPI_CREATED (a file to which the accounts that createAccount made
are appended, for run.py to delete at the end).
"""

from __future__ import annotations

import base64
import json
import os
import zlib

import schemathesis

DOC = os.environ.get("FUZZAPI_DOC", "")
with open(os.environ["FUZZAPI_CREDS"], encoding="utf-8") as f:
    CREDS = json.load(f)
CREATED = os.environ.get("FUZZAPI_CREATED", "")


def _sometimes(*values) -> bool:
    """Half of the cases, decided by the generated values themselves: a case sent again (a
    replay, a shrink) is sent the same."""
    return zlib.crc32(repr(values).encode()) & 1 == 0


def _swap_codes(value):
    """Replaces internal_code values (anywhere in a body) by the account's, half the time."""
    if isinstance(value, dict):
        for k, v in list(value.items()):
            if k == "internal_code" and isinstance(v, str) and _sometimes(value):
                value[k] = CREDS["internal_code"]
            else:
                _swap_codes(v)
    elif isinstance(value, list):
        for v in value:
            _swap_codes(v)


@schemathesis.hook
def before_call(context, case, kwargs):
    headers = case.headers if case.headers is not None else {}
    for name in list(headers):
        if name.lower() in ("authorization", "servicekey", "servicepass", "365villaskey", "365villaspass"):
            del headers[name]
    if DOC == "interface-a":
        basic = base64.b64encode(f"{CREDS['basic_user']}:{CREDS['basic_password']}".encode()).decode()
        headers["Authorization"] = "Basic " + basic
        headers["servicekey"] = CREDS["servicekey"]
        headers["servicepass"] = CREDS["servicepass"]
        _swap_codes(case.body)
    elif DOC == "interface-b":
        params = case.path_parameters
        if params is not None:
            if "owner_token" in params:
                params["owner_token"] = CREDS["owner_token"]
            if "property_id" in params and _sometimes(params):
                params["property_id"] = CREDS["property_id"]
        body = case.body
        op = context.operation
        if isinstance(body, dict) and op is not None and op.path.startswith("/vros/external-booking"):
            body["key"] = CREDS["key"]
            body["pass"] = CREDS["pass"]
            for name in ("propertyId", "property_id"):
                if name in body and _sometimes(body, name):
                    body[name] = CREDS["property_id"]
    elif DOC == "admin":
        headers["Authorization"] = "Bearer " + CREDS["admin_token"]
        params = case.path_parameters
        if params is not None and "id" in params:
            params["id"] = CREDS["account_id"]
    case.headers = headers


@schemathesis.hook
def after_call(context, case, response):
    if DOC != "admin" or not CREATED:
        return
    op = context.operation
    if op is None or op.method.upper() != "POST" or op.path != "/admin/v1/accounts":
        return
    if response.status_code != 201:
        return
    try:
        account_id = response.json()["data"]["account_id"]
    except (ValueError, KeyError, TypeError):
        return
    with open(CREATED, "a", encoding="utf-8") as f:
        f.write(f"{account_id}\n")
