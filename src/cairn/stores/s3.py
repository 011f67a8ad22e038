"""A bucket and key prefix as a store, through boto3 (AWS S3, MinIO, R2, SeaweedFS, moto ...).

What it assumes about the server:
- ETags are the versions (for a single-part upload, the MD5 of the bytes); every file is written
  by one ``PutObject``, never multipart: notes are small.
- Conditional writes: ``PutObject`` with ``IfNoneMatch='*'`` (create-only) and ``IfMatch=ETAG``
  (compare-and-swap), answered 412 when they fail, 404 for ``IfMatch`` on a missing key, and
  409 when two conditional writes race (AWS). AWS has these since 2024; so do MinIO and R2. The
  first conditional operation probes for them (four requests on a ``.cairn-probe-*`` key) and
  records the answer in ``native_cas``; without them the store checks with HEAD, then writes.
- ``DeleteObject`` with ``IfMatch`` is honoured or ignored; ignoring it only widens the window that
  sync's re-read closes. A move is GET, create-only PUT of the target, conditional DELETE of the
  source, so it never overwrites a target and leaves the source in place when it changed.
- A listing is ``ListObjectsV2``, 1,000 keys per request, so the whole prefix costs one request
  per thousand files. Keys are the prefix, "/", then the store path.
- Retries are botocore's "standard" mode (429, 5xx, dropped connections; five attempts with
  backoff); it does not read Retry-After, which S3 does not send.
"""

from __future__ import annotations

import hashlib
import os
import threading
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from .base import (
    AuthFailed,
    Blob,
    Entry,
    PreconditionFailed,
    StoreError,
    StoreNotFound,
    Unreachable,
    check_path,
    check_prefix,
)

PROBE_PREFIX = ".cairn-probe-"
_AUTH_CODES = {
    "AccessDenied",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "InvalidToken",
    "TokenRefreshRequired",
}


class S3Store:
    """Files under ``s3://bucket/prefix``."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "",
        *,
        endpoint_url: str | None = None,
        region: str | None = None,
        access_key: str | None = None,
        secret_key: str | None = None,
        session_token: str | None = None,
    ) -> None:
        self.bucket = bucket
        self._prefix = prefix.strip("/") + "/" if prefix.strip("/") else ""
        endpoint_url = (
            endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        )
        config = Config(
            retries={"max_attempts": 5, "mode": "standard"},
            connect_timeout=10,
            read_timeout=30,
            s3={"addressing_style": "path"} if endpoint_url else {},
            request_checksum_calculation="when_required",  # S3-compatible servers vary here
            response_checksum_validation="when_required",
        )
        self._client = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint_url,
            region_name=region
            or os.environ.get("AWS_REGION")
            or os.environ.get("AWS_DEFAULT_REGION")
            or "us-east-1",
            aws_access_key_id=access_key,
            aws_secret_access_key=secret_key,
            aws_session_token=session_token,
            config=config,
        )
        self._client.meta.events.register("before-send.s3.*", self._count)
        self._where = f"s3://{bucket}/{self._prefix}"
        self._lock = threading.Lock()
        self._native: bool | None = None
        self.requests = 0

    @property
    def native_cas(self) -> bool:
        if self._native is None:
            self._native = self._probe_cas()
        return self._native

    # -- the protocol ------------------------------------------------------------------------

    def list(self, prefix: str = "") -> Iterator[Entry]:
        prefix = check_prefix(prefix)
        start = self._prefix + (prefix + "/" if prefix else "")
        pages = self._client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=start)
        with self._errors(prefix or "/"):
            for page in pages:
                for item in page.get("Contents", []):
                    rel = item["Key"][len(self._prefix) :]
                    if rel.endswith("/") or rel.rsplit("/", 1)[-1].startswith(PROBE_PREFIX):
                        continue  # a folder marker some tools make, or our probe
                    yield Entry(
                        path=rel,
                        size=item["Size"],
                        mtime=item["LastModified"].timestamp(),
                        version=item["ETag"],
                    )

    def read(self, path: str) -> Blob:
        key = self._key(path)
        with self._errors(path):
            response = self._client.get_object(Bucket=self.bucket, Key=key)
            data = response["Body"].read()
        return Blob(data=data, version=response["ETag"])

    def write(
        self, path: str, data: bytes, *, if_version: str | None = None, create_only: bool = False
    ) -> str:
        key = self._key(path)
        data = bytes(data)
        conditions: dict[str, str] = {}
        if create_only or if_version is not None:
            if self.native_cas:
                conditions = {"IfNoneMatch": "*"} if create_only else {"IfMatch": str(if_version)}
            else:
                self._check_then(path, if_version=if_version, create_only=create_only)
        try:
            with self._errors(path, missing_is_precondition=if_version is not None):
                response = self._client.put_object(Bucket=self.bucket, Key=key, Body=data, **conditions)
        except PreconditionFailed as exc:
            # botocore retried a PUT that may have landed before the line dropped: if the key now
            # holds exactly our bytes, that 412 was our own first try's doing.
            retried = getattr(exc.__cause__, "response", {}).get("ResponseMetadata", {}).get("RetryAttempts")
            landed = self._version_if_holds(key, data) if retried else None
            if landed is None:
                raise
            return landed
        return response["ETag"]

    def delete(self, path: str, *, if_version: str | None = None) -> None:
        key = self._key(path)
        with self._errors(path):
            if if_version is None or not self.native_cas:
                current = self._client.head_object(Bucket=self.bucket, Key=key)["ETag"]  # S3 deletes
                if if_version is not None and current != if_version:  # a missing key silently
                    raise PreconditionFailed(f"{path!r} changed in {self._where}; it was not deleted.")
            conditions = {"IfMatch": if_version} if if_version is not None and self.native_cas else {}
            self._client.delete_object(Bucket=self.bucket, Key=key, **conditions)

    def move(self, source: str, target: str) -> None:
        blob = self.read(source)
        version = self.write(target, blob.data, create_only=True)
        try:
            self.delete(source, if_version=blob.version)
        except (PreconditionFailed, StoreNotFound):
            self.delete(target, if_version=version)  # the source changed meanwhile: undo
            raise PreconditionFailed(
                f"{source!r} changed while it was being moved; it was left as it is."
            ) from None

    def close(self) -> None:
        self._client.close()

    # -- helpers -----------------------------------------------------------------------------

    def _key(self, path: str) -> str:
        return self._prefix + check_path(path)

    def _count(self, **_kwargs: Any) -> None:
        with self._lock:
            self.requests += 1

    def _errors(self, path: str, *, missing_is_precondition: bool = False) -> _Translate:
        return _Translate(self, path, missing_is_precondition)

    def _version_if_holds(self, key: str, data: bytes) -> str | None:
        try:
            etag = self._client.head_object(Bucket=self.bucket, Key=key)["ETag"]
        except (ClientError, BotoCoreError):
            return None
        return etag if etag.strip('"') == hashlib.md5(data).hexdigest() else None

    def _check_then(self, path: str, *, if_version: str | None, create_only: bool) -> None:
        try:
            with self._errors(path):
                current = self._client.head_object(Bucket=self.bucket, Key=self._key(path))["ETag"]
        except StoreNotFound:
            if if_version is not None:
                raise PreconditionFailed(f"{path!r} is gone from {self._where}.") from None
            return
        if create_only or current != if_version:
            raise PreconditionFailed(f"{path!r} exists or changed in {self._where}; nothing was written.")

    def _probe_cas(self) -> bool:
        """Does the server refuse a PutObject whose IfNoneMatch / IfMatch fails?"""
        key = f"{self._prefix}{PROBE_PREFIX}{uuid.uuid4().hex}"
        refused = 0
        with self._errors("(probe)"):
            self._client.put_object(Bucket=self.bucket, Key=key, Body=b"", IfNoneMatch="*")
            for condition in ({"IfNoneMatch": "*"}, {"IfMatch": '"cairn-never"'}):
                try:
                    self._client.put_object(Bucket=self.bucket, Key=key, Body=b"x", **condition)
                except ClientError as exc:
                    refused += exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") == 412
            self._client.delete_object(Bucket=self.bucket, Key=key)
        return refused == 2


class _Translate:
    """Turns botocore's errors into the store's, at the edge."""

    def __init__(self, store: S3Store, path: str, missing_is_precondition: bool) -> None:
        self.store, self.path, self.missing_is_precondition = store, path, missing_is_precondition

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type | None, exc: BaseException | None, tb: object) -> bool:
        where, path = self.store._where, self.path
        if isinstance(exc, NoCredentialsError):
            raise AuthFailed(
                "No S3 credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or a profile)."
            ) from exc
        if isinstance(exc, ClientError):
            error = exc.response.get("Error", {})
            code = str(error.get("Code", ""))
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if code in ("PreconditionFailed", "ConditionalRequestConflict") or status in (409, 412):
                raise PreconditionFailed(f"{path!r} changed in {where}; nothing was written.") from exc
            if code == "NoSuchBucket":
                raise StoreError(f"The bucket {self.store.bucket!r} does not exist.") from exc
            if code in ("NoSuchKey", "404", "NotFound") or status == 404:
                if self.missing_is_precondition:
                    raise PreconditionFailed(f"{path!r} is gone from {where}.") from exc
                raise StoreNotFound(f"No file at {path!r} in {where}.") from exc
            if code in _AUTH_CODES or status in (401, 403):
                raise AuthFailed(
                    f"{where} refused the credential ({code or status}). Renew it: set new "
                    "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or cairn remote set URL --user KEY --password-stdin."
                ) from exc
            if isinstance(status, int) and status >= 500 or code in ("SlowDown", "Throttling"):
                raise Unreachable(f"{where} kept failing ({code or status}) after retries.") from exc
            raise StoreError(
                f"{where} refused {path!r}: {code} {error.get('Message', '')}".strip() + "."
            ) from exc
        if isinstance(exc, BotoCoreError):
            raise Unreachable(f"Cannot reach {where}: {exc}.") from exc
        return False


def from_url(
    url: str, *, user: str | None = None, password: str | None = None, token: str | None = None
) -> S3Store:
    """``s3://bucket/prefix[?endpoint=URL&region=NAME]``; the endpoint defaults to AWS_ENDPOINT_URL.

    ``user`` / ``password`` / ``token`` are an access key id, its secret and a session token;
    without them boto3 finds credentials as usual (``AWS_*`` variables, profiles).
    """
    parts = urlsplit(url)
    if not parts.netloc:
        raise StoreError(f"An S3 remote is s3://bucket/prefix, not {url!r}.")
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    return S3Store(
        parts.netloc,
        parts.path,
        endpoint_url=query.get("endpoint"),
        region=query.get("region"),
        access_key=user,
        secret_key=password,
        session_token=token,
    )
