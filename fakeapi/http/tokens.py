"""Service account tokens: what ``serviceaccounts/token`` issues and ``tokenreviews`` validates.

kube-apiserver signs bound service account tokens as JWTs with its
``--service-account-signing-key-file`` and validates them (signature, expiry,
audience, and that the service account - and a bound object - still exist with
the same uid). Here the key is an EC P-256 key made for each served server
(``ES256``, through ``PyJWT``); times are the server's clock, so a token
expires in virtual time. The claims are those of ``serviceaccount.Claims``:
``iss``, ``sub`` (``system:serviceaccount:<ns>:<name>``), ``aud``, ``exp``,
``iat``, ``nbf``, ``jti`` and the private ``kubernetes.io`` claim.
"""

from __future__ import annotations

import threading
import uuid
import weakref
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from fakeapi.machinery import errors
from fakeapi.machinery.errors import Cause

if TYPE_CHECKING:
    from fakeapi.server.apiserver import APIServer

#: The issuer and default audience (``--service-account-issuer``; a kubeadm cluster's).
ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_EXPIRATION = 3600
MIN_EXPIRATION = 600
MAX_EXPIRATION = 1 << 32
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
#: The static token of the served kubeconfig (``fakeapi.http.server.KUBECONFIG_TOKEN``): kube-apiserver's
#: ``--token-auth-file`` entry for the administrator, so a TokenReview of it names that user.
STATIC_TOKENS = {"fakeapi": ("kubernetes-admin", ("kubeadm:cluster-admins", "system:authenticated"))}


class TokenIssuer:
    """Signs and validates the tokens of one server."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric import ec

        self._key = ec.generate_private_key(ec.SECP256R1())
        #: The static tokens of this server (``--token-auth-file``'s): token -> (user, groups).
        self.static: dict[str, tuple[str, tuple[str, ...]]] = dict(STATIC_TOKENS)

    def add_static_token(self, token: str) -> None:
        """Make ``token`` (the token a server requires) the administrator's, as TokenReview reports it."""
        self.static[token] = STATIC_TOKENS["fakeapi"]

    def issue(self, api: APIServer, namespace: str, name: str, spec: dict[str, Any]) -> dict[str, Any]:
        """A TokenRequest's answer for service account ``namespace/name`` (404 when it does not exist,
        422 for a bad spec): the request with its defaulted spec and ``status.token``."""
        import jwt

        sa = api.get("ServiceAccount", name, namespace, actor="kube-apiserver")
        audiences = spec.get("audiences") or [ISSUER]
        seconds = spec.get("expirationSeconds")
        seconds = DEFAULT_EXPIRATION if seconds is None else seconds
        causes: list[Cause] = []
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            raise errors.bad_request("json: cannot unmarshal into Go struct field TokenRequestSpec.spec.expirationSeconds"
                                     " of type int64")
        if seconds < MIN_EXPIRATION:
            causes.append(Cause(errors.FIELD_VALUE_INVALID,
                                f"Invalid value: {seconds}: may not specify a duration less than 10 minutes",
                                "spec.expirationSeconds"))
        elif seconds > MAX_EXPIRATION:
            causes.append(Cause(errors.FIELD_VALUE_INVALID,
                                f"Invalid value: {seconds}: may not specify a duration larger than 2^32 seconds",
                                "spec.expirationSeconds"))
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise errors.bad_request("json: cannot unmarshal into Go struct field TokenRequestSpec.spec.audiences of "
                                     "type []string")
        if causes:
            raise errors.invalid("authentication.k8s.io", "TokenRequest", name, causes)
        now = api.clock.now()
        exp = now + timedelta(seconds=seconds)
        private: dict[str, Any] = {"namespace": namespace,
                                   "serviceaccount": {"name": name, "uid": sa["metadata"]["uid"]}}
        bound = spec.get("boundObjectRef")
        if isinstance(bound, dict) and bound.get("kind") in ("Pod", "Secret", "Node"):
            obj = api.get(str(bound["kind"]), str(bound.get("name") or ""),
                          namespace if bound["kind"] != "Node" else None, actor="kube-apiserver")
            if bound.get("uid") and bound["uid"] != obj["metadata"]["uid"]:
                raise errors.conflict("", str(bound["kind"]).lower() + "s", str(bound.get("name")),
                                      "the UID in the bound object reference does not match")
            private[str(bound["kind"]).lower()] = {"name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"]}
        claims = {"iss": ISSUER, "sub": f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}", "aud": list(audiences),
                  "exp": int(exp.timestamp()), "iat": int(now.timestamp()), "nbf": int(now.timestamp()),
                  "jti": str(uuid.UUID(int=api_random(api))), "kubernetes.io": private}
        token = jwt.encode(claims, self._key, algorithm="ES256", headers={"kid": "fakeapi"})
        return {
            "kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": api.clock.timestamp()},
            "spec": {**{k: v for k, v in spec.items() if v is not None}, "audiences": list(audiences),
                     "expirationSeconds": seconds, "boundObjectRef": bound},
            "status": {"token": token, "expirationTimestamp": _rfc3339(exp)},
        }

    def claims(self, api: APIServer, token: str) -> dict[str, Any] | None:
        """The claims of a token this issuer signed and that has not expired (server clock), else None."""
        import jwt

        try:
            claims: dict[str, Any] = jwt.decode(token, self._key.public_key(), algorithms=["ES256"],
                                                options={"verify_exp": False, "verify_nbf": False,
                                                         "verify_iat": False, "verify_aud": False})
        except jwt.PyJWTError:
            return None
        if int(claims.get("exp") or 0) <= int(api.clock.now().timestamp()):
            return None
        return claims

    def review(self, api: APIServer, token: str, audiences: list[str] | None) -> dict[str, Any]:
        """A TokenReview's status: the user the token names, or ``error`` and no user."""
        static = self.static.get(token)
        if static is not None:
            return {"authenticated": True, "user": {"username": static[0], "groups": list(static[1])},
                    "audiences": list(audiences or [ISSUER])}
        claims = self.claims(api, token)
        if claims is None:
            return {"user": {}, "error": "[invalid bearer token, token lookup failed]"}
        private = claims.get("kubernetes.io") or {}
        ns = str(private.get("namespace") or "")
        sa = private.get("serviceaccount") or {}
        try:
            stored = api.get("ServiceAccount", str(sa.get("name") or ""), ns, actor="kube-apiserver")
        except errors.ApiError:
            return {"user": {}, "error": f"[invalid bearer token, service account {ns}/{sa.get('name')} not found]"}
        if stored["metadata"]["uid"] != sa.get("uid"):
            return {"user": {}, "error": "[invalid bearer token, service account UID "
                                         f"({sa.get('uid')}) does not match claim ({stored['metadata']['uid']})]"}
        token_aud = list(claims.get("aud") or [])
        wanted = audiences or [ISSUER]
        matched = [a for a in wanted if a in token_aud]
        if not matched:
            return {"user": {}, "error": "[invalid bearer token, token audiences "
                                         f"{_go_list(token_aud)} is invalid for the target audiences "
                                         f"{_go_list(wanted)}]"}
        extra: dict[str, list[str]] = {}
        for key in ("pod", "node"):
            if key in private:
                extra[f"authentication.kubernetes.io/{key}-name"] = [private[key]["name"]]
                extra[f"authentication.kubernetes.io/{key}-uid"] = [private[key]["uid"]]
        extra["authentication.kubernetes.io/credential-id"] = [f"JTI={claims.get('jti')}"]
        user = {"username": str(claims.get("sub")), "uid": str(sa.get("uid")),
                "groups": ["system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated"],
                "extra": extra}
        return {"authenticated": True, "user": user, "audiences": matched}


def _go_list(values: list[str]) -> str:
    return '["' + '" "'.join(values) + '"]' if values else "[]"


def _rfc3339(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


_rng_lock = threading.Lock()


def api_random(api: APIServer) -> int:
    """128 random bits from the server's seeded generator (a token's ``jti``: reproducible per seed)."""
    with _rng_lock:
        rng = _RNG.get(api)
        if rng is None:
            import random

            rng = _RNG[api] = random.Random(api.seed ^ 0x5A17)
        return rng.getrandbits(128)


_RNG: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_ISSUERS: weakref.WeakKeyDictionary[Any, TokenIssuer] = weakref.WeakKeyDictionary()


def issuer_for(api: APIServer) -> TokenIssuer:
    """The token issuer of ``api`` (one per server, made on first use)."""
    with _rng_lock:
        found = _ISSUERS.get(api)
        if found is None:
            found = _ISSUERS[api] = TokenIssuer()
        return found
