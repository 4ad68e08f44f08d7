#!/usr/bin/env python3
"""An S3-compatible server for imgbake's remote-cache tests and benchmark: moto's server (PyPI `moto[server]`)
on loopback, with request authentication ON, so that AWS Signature V4 signatures are checked.

    python3 Tests/Support/s3server.py [--port 0] [--bucket cache] [--watch-parent]

Prints one line once it is ready:  READY <port> <access key id> <secret access key>
The credentials are made by moto's IAM for this run (a user with an allow-all policy); requests signed
with anything else get 403 (SignatureDoesNotMatch / InvalidAccessKeyId). moto checks the signature, not
the x-amz-content-sha256 payload hash (real S3 checks both); it is made to check the signature against the
query as sent, as AWS does (see check_signatures_on_the_query_as_sent).

moto turns authentication on after INITIAL_NO_AUTH_ACTION_COUNT unauthenticated actions; the four set-up
calls below (create user, create key, attach policy, create bucket) are those.
"""
import argparse, json, logging, os, socket, threading, time

SETUP_ACTIONS = 4
os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = str(SETUP_ACTIONS)
os.environ.setdefault("MOTO_ALLOW_NONEXISTENT_REGION", "true")

import boto3  # noqa: E402  (after the environment moto reads at import)
from urllib.parse import urlparse  # noqa: E402
from moto.core.authorization import ActionAuthenticatorMixin  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402


def check_signatures_on_the_query_as_sent():
    """moto 5 checks a Signature V4 signature against the request's query after decoding it (a listing's
    prefix=v2%2F becomes prefix=v2/); AWS checks it against the query as sent, percent-encoded. So a request
    signed as AWS wants it (boto3's, imgbake's) failed here, and one AWS refuses passed. This gives moto's
    check the query as it came, from the WSGI environment: the server then accepts what AWS accepts."""
    original = ActionAuthenticatorMixin._authenticate_and_authorize_action

    def as_sent(self, iam_request_cls, resource="*"):
        environ = getattr(getattr(self, "request", None), "environ", None) or {}
        raw = environ.get("QUERY_STRING")
        if not raw:
            return original(self, iam_request_cls, resource)
        decoded = self.uri
        self.uri = urlparse(decoded)._replace(query=raw).geturl()
        try:
            return original(self, iam_request_cls, resource)
        finally:
            self.uri = decoded

    ActionAuthenticatorMixin._authenticate_and_authorize_action = as_sent


def one_request_at_a_time():
    """moto's S3 backend is not thread-safe, and ThreadedMotoServer serves each request on a thread of its
    own. A PUT replacing an object disposes of the version it replaces (FakeKey.dispose closes its buffer)
    while a GET of that version, or the PUT that wrote it, may still be reading it: "ValueError: I/O
    operation on closed file", answered HTTP 500. Shards starting together all write layout.json, so a
    shard's GET of it could fail so, and the build then goes on without the remote (a warning). Real S3
    answers such a GET with one version or the other. So moto handles one request at a time here, the
    answer's body read before the next goes in."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication
    lock = threading.Lock()
    dispatch = DomainDispatcherApplication.__call__

    def serialised(self, environ, start_response):
        with lock:
            answer = dispatch(self, environ, start_response)
            try:
                return [b"".join(answer)]
            finally:
                if hasattr(answer, "close"):
                    answer.close()

    DomainDispatcherApplication.__call__ = serialised


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--bucket", default="cache")
    ap.add_argument("--watch-parent", action="store_true", help="exit when the parent process ends")
    a = ap.parse_args()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request on the test's stderr
    check_signatures_on_the_query_as_sent()
    one_request_at_a_time()
    port = a.port or free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    anonymous = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="setup", aws_secret_access_key="setup")
    iam = boto3.client("iam", **anonymous)
    iam.create_user(UserName="imgbake-ci")
    key = iam.create_access_key(UserName="imgbake-ci")["AccessKey"]
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.put_user_policy(UserName="imgbake-ci", PolicyName="all", PolicyDocument=json.dumps(policy))
    boto3.client("s3", **anonymous).create_bucket(Bucket=a.bucket)
    print(f"READY {port} {key['AccessKeyId']} {key['SecretAccessKey']}", flush=True)

    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if a.watch_parent and os.getppid() != parent:
            server.stop()
            return


if __name__ == "__main__":
    main()
