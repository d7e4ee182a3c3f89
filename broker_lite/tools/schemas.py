"""``broker-lite schemas``: a schema registry's subjects, versions, configs and modes, through
its REST API (Confluent's v1; broker_lite's registry, Confluent's or Karapace)::

    broker-lite schemas --schema-registry-url http://127.0.0.1:8081 --list
    broker-lite schemas ... --describe --subject users-value [--version 2]
    broker-lite schemas ... --describe --id 7
    broker-lite schemas ... --register --subject users-value --schema-file user.avsc \\
        [--schema-type AVRO|JSON|PROTOBUF] [--reference NAME=SUBJECT:VERSION ...]
    broker-lite schemas ... --check --subject users-value --schema-file user.avsc [--version 1]
    broker-lite schemas ... --config [--subject S] [--set FULL]
    broker-lite schemas ... --mode [--subject S] [--set READONLY]
    broker-lite schemas ... --delete --subject users-value [--version 2] [--permanent]

``--command-config`` names a properties file of the client's settings (confluent-kafka's
names: ``basic.auth.user.info``, ``ssl.ca.location``, ``ssl.certificate.location``,
``ssl.key.location``), so that no password is on the command line. ``--check`` exits 1 when
the schema is incompatible (printing why); any refusal of the registry exits 1 with its
``error_code`` and message on stderr.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from broker_lite.registry.client import RegistryClient, RegistryRequestError

from . import properties
from .common import ToolError

NAME = "schemas"
HELP = "list, show, register, check and delete schemas of a schema registry"

ACTIONS = ("list", "describe", "register", "check", "config", "mode", "delete")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schema-registry-url", required=True, metavar="URL",
                        help="the registry (http:// or https://)")
    parser.add_argument("--command-config", metavar="PATH",
                        help="a properties file of client settings (basic.auth.user.info, "
                             "ssl.ca.location, ...)")
    actions = parser.add_mutually_exclusive_group(required=True)
    for action in ACTIONS:
        actions.add_argument(f"--{action}", action="store_true",
                             help=f"{action} (see the command's description)")
    parser.add_argument("--subject", help="the subject")
    parser.add_argument("--subject-prefix", default="", help="--list: only these subjects")
    parser.add_argument("--version", help="a version: a number or latest")
    parser.add_argument("--id", type=int, help="--describe: a schema by its global id")
    parser.add_argument("--schema-file", metavar="PATH", help="the schema to register or check")
    parser.add_argument("--schema-type", default="AVRO", choices=("AVRO", "JSON", "PROTOBUF"),
                        help="the schema's type (default AVRO)")
    parser.add_argument("--reference", action="append", default=[],
                        metavar="NAME=SUBJECT:VERSION", help="a reference of the schema")
    parser.add_argument("--set", metavar="VALUE",
                        help="--config: a compatibility level; --mode: a mode")
    parser.add_argument("--deleted", action="store_true", help="include soft-deleted ones")
    parser.add_argument("--permanent", action="store_true", help="--delete: a hard delete")
    parser.set_defaults(usage_error=parser.error)


def _references(specs: list[str], args: argparse.Namespace) -> list[dict[str, object]]:
    found = []
    for spec in specs:
        name, _, rest = spec.partition("=")
        subject, _, version = rest.rpartition(":")
        if not name or not subject or not version.isdigit():
            args.usage_error(f"--reference {spec!r}: expected NAME=SUBJECT:VERSION")
        found.append({"name": name, "subject": subject, "version": int(version)})
    return found


def _schema_body(args: argparse.Namespace) -> dict[str, object]:
    if not args.schema_file:
        args.usage_error("--schema-file is required")
    try:
        text = Path(args.schema_file).read_text(encoding="utf-8")
    except OSError as exc:
        raise ToolError(f"cannot read {args.schema_file}: {exc.strerror}") from None
    body: dict[str, object] = {"schema": text, "schemaType": args.schema_type}
    references = _references(args.reference, args)
    if references:
        body["references"] = references
    return body


def _subject(args: argparse.Namespace) -> str:
    if not args.subject:
        args.usage_error("--subject is required")
    return str(args.subject)


def _print(value: object) -> None:
    print(json.dumps(value, indent=2) if isinstance(value, dict | list) else value)


def run(args: argparse.Namespace) -> int:
    settings = {"url": args.schema_registry_url,
                **properties.merged(args.command_config, "--command-config", None)}
    try:
        client = RegistryClient(settings)
        return _run(client, args)
    except RegistryRequestError as exc:
        raise ToolError(f"{exc} (error code {exc.error_code})" if exc.error_code != -1
                        else str(exc)) from None


def _run(client: RegistryClient, args: argparse.Namespace) -> int:
    deleted = {"deleted": "true"} if args.deleted else None
    if args.list:
        for subject in client.request("GET", "/subjects", query={
                **(deleted or {}), "subjectPrefix": args.subject_prefix}):
            versions = client.request("GET", f"/subjects/{_quoted(subject)}/versions",
                                      query=deleted)
            print(f"{subject}\t{','.join(map(str, versions))}")
        return 0
    if args.describe:
        if args.id is not None:
            _print(client.request("GET", f"/schemas/ids/{args.id}"))
        elif args.version is None:
            _print(client.request("GET", f"/subjects/{_quoted(_subject(args))}/versions",
                                  query=deleted))
        else:
            _print(client.request("GET", f"/subjects/{_quoted(_subject(args))}/versions/"
                                         f"{args.version}", query=deleted))
        return 0
    if args.register:
        answer = client.request("POST", f"/subjects/{_quoted(_subject(args))}/versions",
                                _schema_body(args))
        print(f"id {answer['id']}" + (f" version {answer['version']}" if "version" in answer
                                      else ""))
        return 0
    if args.check:
        version = args.version or "latest"
        answer = client.request(
            "POST", f"/compatibility/subjects/{_quoted(_subject(args))}/versions/{version}",
            _schema_body(args), query={"verbose": "true"})
        print("compatible" if answer["is_compatible"] else "incompatible")
        for message in answer.get("messages") or []:
            print(f"  {message}")
        return 0 if answer["is_compatible"] else 1
    if args.delete:
        path = f"/subjects/{_quoted(_subject(args))}"
        if args.version is not None:
            path += f"/versions/{args.version}"
        _print(client.request("DELETE", path,
                              query={"permanent": "true"} if args.permanent else None))
        return 0
    kind = "config" if args.config else "mode"
    path = f"/{kind}" + (f"/{_quoted(args.subject)}" if args.subject else "")
    if args.set is not None:
        body = {"compatibility": args.set} if kind == "config" else {"mode": args.set}
        answer = client.request("PUT", path, body)
    else:
        answer = client.request("GET", path, query={"defaultToGlobal": "true"})
    print(answer.get("compatibilityLevel") or answer.get("compatibility") or answer.get("mode"))
    return 0


def _quoted(subject: str) -> str:
    from urllib.parse import quote

    return quote(subject, safe="")
