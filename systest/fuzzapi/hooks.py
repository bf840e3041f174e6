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
               ids are small numbers, the demo account's among them);
  booking-engine  the owner token in every path, and `Origin` the fresh account's brand's
               (edge refuses 403 before anything else is read without it).

Some generated ids are swapped for the fresh account's real ones (its property, its
internal code; for the booking engine its property and a checkout held, by run.py or by
an earlier case) in half of the cases (chosen by a hash of the generated values, so that a case
replayed is the same), so that the cases reach past "not found".

Environment: FUZZAPI_DOC (interface-a, interface-b, admin or booking-engine), FUZZAPI_CREDS (a JSON file
written by run.py), FUZZAPI_CREATED (a file to which the accounts that createAccount made
are appended, for run.py to delete at the end).
"""

from __future__ import annotations

import base64
import datetime
import json
import os
import zlib

import schemathesis

DOC = os.environ.get("FUZZAPI_DOC", "")
with open(os.environ["FUZZAPI_CREDS"], encoding="utf-8") as f:
    CREDS = json.load(f)
CREATED = os.environ.get("FUZZAPI_CREATED", "")
# Checkouts held (run.py's, then each 201 of POST /checkouts), for {checkout_id}.
CHECKOUTS = [CREDS["checkout_id"]] if CREDS.get("checkout_id") else []


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


def _bookable_stay(body: dict) -> None:
    """Makes a stay body one the fresh account's property could sell: the property, and
    dates 30–330 days ahead, 2–11 nights (the rates' minimum stay is 2), 1–4 adults, chosen by
    a hash of the generated body."""
    h = zlib.crc32(repr(sorted(body.items(), key=str)).encode())
    arrival = datetime.date.today() + datetime.timedelta(days=30 + h % 300)
    body["property"] = int(CREDS["property_id"])
    body["arrival"] = arrival.isoformat()
    body["departure"] = (arrival + datetime.timedelta(days=2 + (h >> 9) % 10)).isoformat()
    if not isinstance(body.get("adults"), int) or not 1 <= body["adults"] <= 4:
        body["adults"] = 1 + (h >> 13) % 4
    if "children" in body and (not isinstance(body["children"], int) or not 0 <= body["children"] <= 2):
        body["children"] = 0


@schemathesis.hook
def before_call(context, case, kwargs):
    headers = case.headers if case.headers is not None else {}
    for name in list(headers):
        if name.lower() in ("authorization", "servicekey", "servicepass", "365villaskey", "365villaspass", "origin"):
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
    elif DOC == "booking-engine":
        op = context.operation
        params = case.path_parameters
        if op is not None and op.path.startswith("/widget/api/"):
            headers["Origin"] = CREDS["origin"]
        if params is not None:
            if "owner_token" in params:
                params["owner_token"] = CREDS["owner_token"]
            if "checkout_id" in params and CHECKOUTS and _sometimes(params):
                params["checkout_id"] = CHECKOUTS[zlib.crc32(repr(params).encode()) % len(CHECKOUTS)]
        query = case.query
        if isinstance(query, dict) and "property" in query and _sometimes(query):
            query["property"] = CREDS["property_id"]
        body = case.body
        if isinstance(body, dict) and "property" in body and _sometimes(body):
            _bookable_stay(body)
            # A key of its own per body: the generated keys repeat, and a key reused with
            # another body is 422 (documented) before anything else is read.
            if any(n.lower() == "idempotency-key" for n in headers):
                for n in [n for n in headers if n.lower() == "idempotency-key"]:
                    del headers[n]
                headers["Idempotency-Key"] = "fuzz-%08x" % zlib.crc32(repr(sorted(body.items(), key=str)).encode())
        if isinstance(body, dict) and isinstance(body.get("card"), dict) and _sometimes(body, "card"):
            _test_card(body["card"])
    case.headers = headers


# The test gateway's cards (docs/interface-b-fields.md, "Card charges and test cards"):
# approved, declined, 3-D Secure.
TEST_CARDS = ["4242424242424242", "5555555555554444", "378282246310005", "4000000000000002", "4000000000003220"]


def _test_card(card: dict) -> None:
    """Makes a generated card one of the test gateway's, valid otherwise."""
    h = zlib.crc32(repr(sorted(card.items(), key=str)).encode())
    card["number"] = TEST_CARDS[h % len(TEST_CARDS)]
    card["name"] = "Fuzz Guest"
    card["exp_month"] = 12
    card["exp_year"] = datetime.date.today().year + 2
    card["cvc"] = "1234" if card["number"].startswith("3") else "123"


@schemathesis.hook
def after_call(context, case, response):
    op = context.operation
    if DOC == "booking-engine" and op is not None and op.method.upper() == "POST" and op.path.endswith("/checkouts"):
        if response.status_code == 201:
            try:
                CHECKOUTS.append(str(response.json()["data"]["id"]))
            except (ValueError, KeyError, TypeError):
                pass
        return
    if DOC != "admin" or not CREATED:
        return
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
