"""What deploy/ promises about itself: every container of the Kubernetes manifest is locked down, names an image by
version, and the app's pods share one password-protected Redis reached over HTTPS only; the Dockerfile's health
check follows ``PORT``. (No cluster runs here: these read the files a cluster would be given.)"""

import re
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


@pytest.fixture(scope="module")
def manifest() -> dict[tuple[str, str], dict]:
    docs = [d for d in yaml.safe_load_all((DEPLOY / "kubernetes.yaml").read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def _pods(manifest):
    return [d["spec"]["template"]["spec"] for (kind, _), d in manifest.items() if kind == "Deployment"]


def test_every_object_is_valid_against_the_kubernetes_api_schema(manifest):
    validate = pytest.importorskip("kubernetes_validate")
    for obj in manifest.values():
        validate.validate(obj, "1.37.0", strict=True)              # strict: an unknown or misspelt field fails


def test_every_container_runs_unprivileged_on_a_read_only_root_with_no_capability(manifest):
    pods = _pods(manifest)
    assert len(pods) == 2
    for pod in pods:
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] > 0
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert pod["automountServiceAccountToken"] is False
        for container in pod["containers"]:
            sc = container["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False and sc["readOnlyRootFilesystem"] is True
            assert sc["capabilities"] == {"drop": ["ALL"]}
            image = container["image"]
            assert re.fullmatch(r"[\w./-]+:\d[\w.-]*", image) and not image.endswith(":latest"), image
            volumes = {v["name"] for v in pod["volumes"]}
            assert {m["name"] for m in container.get("volumeMounts", [])} <= volumes


def test_the_app_pods_share_one_redis_with_a_password_that_only_they_reach(manifest):
    app = manifest[("Deployment", "attention-explorer")]["spec"]["template"]["spec"]["containers"][0]
    polls = next(e for e in app["env"] if e["name"] == "EXPLORER_POLLS")
    assert polls["valueFrom"]["secretKeyRef"]["name"] == "attention-explorer-polls"
    redis = manifest[("Deployment", "attention-explorer-redis")]["spec"]["template"]["spec"]["containers"][0]
    password = next(e for e in redis["env"] if e["name"] == "REDISCLI_AUTH")       # the probes' client reads it
    assert password["valueFrom"]["secretKeyRef"] == {"name": "attention-explorer-polls", "key": "password"}
    pod = manifest[("Deployment", "attention-explorer-redis")]["spec"]["template"]["spec"]
    config = next(v for v in pod["volumes"] if v["name"] == "config")["secret"]
    assert redis["args"][0] == "/etc/redis/redis.conf" and config["items"] == [{"key": "redis.conf",
                                                                                "path": "redis.conf"}]
    assert config["secretName"] == "attention-explorer-polls" and config["defaultMode"] & 0o007 == 0
    commands = [" ".join(redis[p]["exec"]["command"]) for p in ("readinessProbe", "livenessProbe")]
    for argv in [" ".join(redis["args"]), *commands]:                 # no password on any command line
        assert "PASSWORD" not in argv and "-a " not in argv and "requirepass" not in argv, argv
    args = redis["args"]
    assert args[args.index("--maxmemory-policy") + 1] == "noeviction" and "--maxmemory" in args
    policy = manifest[("NetworkPolicy", "attention-explorer-redis")]["spec"]
    assert policy["podSelector"]["matchLabels"] == {"app": "attention-explorer-redis"}
    assert policy["ingress"] == [{"from": [{"podSelector": {"matchLabels": {"app": "attention-explorer"}}}],
                                  "ports": [{"port": 6379}]}]


def test_the_app_believes_forwarded_addresses_from_the_cluster_only_and_counts_a_hall_per_address(manifest):
    app = manifest[("Deployment", "attention-explorer")]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in app["env"]}
    assert env["EXPLORER_TRUSTED_PROXIES"] and int(env["EXPLORER_PHONES_PER_ADDRESS"]) <= 400
    assert int(env.get("EXPLORER_VOTES_PER_ADDRESS", "100")) <= 100


def test_the_app_probes_allow_for_the_longest_request(manifest):
    app = manifest[("Deployment", "attention-explorer")]["spec"]["template"]["spec"]["containers"][0]
    from explorer.connections import REQUEST_TIMEOUT_S

    live = app["livenessProbe"]
    assert live["timeoutSeconds"] >= REQUEST_TIMEOUT_S and live["failureThreshold"] >= 3
    assert app["readinessProbe"]["timeoutSeconds"] >= 5


def test_the_ingress_serves_https_with_a_secure_cookie_bounded_per_address(manifest):
    ingress = manifest[("Ingress", "attention-explorer")]
    notes = ingress["metadata"]["annotations"]
    assert ingress["spec"]["tls"] and {r["host"] for r in ingress["spec"]["rules"]} <= \
        {h for t in ingress["spec"]["tls"] for h in t["hosts"]}
    assert notes["nginx.ingress.kubernetes.io/ssl-redirect"] == "true"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-secure"] == "true"
    assert notes["nginx.ingress.kubernetes.io/session-cookie-samesite"] == "Lax"
    assert int(notes["nginx.ingress.kubernetes.io/limit-rps"]) > 0
    assert int(notes["nginx.ingress.kubernetes.io/proxy-read-timeout"]) <= 300


def test_the_images_health_check_asks_the_port_it_serves_on():
    dockerfile = (DEPLOY / "Dockerfile").read_text()
    check = next(line for line in dockerfile.splitlines() if line.startswith("HEALTHCHECK"))
    assert "os.environ['PORT']" in check and "8501" not in check
