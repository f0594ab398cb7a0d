"""``kubesched serve``: the embedded cluster as a Kubernetes API on localhost (plain HTTP, no auth).

The command parses its flags into :class:`ServeOptions`; :func:`setup` builds the object graph
(clock, store loaded from the manifests, API server, kubelets) and :func:`run` serves it until
SIGINT/SIGTERM (as ``kubesched run``'s ``setup``/``run`` and upstream ``Setup``/``Run``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

import click

from kubesched.cli.detach import serve_detached
from kubesched.cli.paths import OutputFile
from kubesched.cli.ports import check_listen
from kubesched.cli.shared_flags import speed_flag
from kubesched.cli.simulate import report_unknown_fields
from kubesched.cli.units import FiniteFloat
from kubesched.clock import RealClock
from kubesched.embedded.apiserver.kubeconfig import write_kubeconfig
from kubesched.embedded.apiserver.reviews import Reviews, load_policy_file, load_token_file
from kubesched.embedded.apiserver.server import (
    ServerHandle,
    epoch_resource_version,
    serve_forever,
    setup_server,
)
from kubesched.embedded.controllers.nodelifecycle import NodeLifecycleController
from kubesched.embedded.controllers.tainteviction import TaintEvictionController
from kubesched.embedded.kubelet.config import KubeletImageConfig
from kubesched.embedded.kubelet.dra_driver import FakeGPUDriver
from kubesched.embedded.kubelet.heartbeat import NodeHeartbeats
from kubesched.embedded.kubelet.live import LiveKubelets
from kubesched.embedded.kubelet.settings_file import read_kubelet_settings
from kubesched.embedded.manifests import Manifest, load_manifests
from kubesched.embedded.store import MemoryCluster
from kubesched.errors import ListenError
from kubesched.images.catalogue import load_catalogue
from kubesched.modes.simulate.run import validate_manifests


def check_manifests(manifests: list[Manifest]) -> tuple[list[Manifest], list[str]]:
    """What an API server refuses is left out here, the rest is served: returns the objects to load
    and one line per malformed or duplicate object of any kind (``badpods.yaml doc 2 (Pod
    default/web): spec.containers[0].resources.requests.cpu: invalid quantity "four"``), as
    ``simulate`` words its pod errors. Unknown fields warn as in ``simulate``."""
    report_unknown_fields(manifests, strict=False)
    invalid: list[tuple[Manifest, str]] = []
    validate_manifests(manifests, invalid=invalid)
    refused = {id(m) for m, _ in invalid}
    return [m for m in manifests if id(m) not in refused], [line for _, line in invalid]


@click.command()
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    type=click.Path(),
    help="Manifest file or directory (YAML, JSON, kind: List) to load; repeatable. The namespaces "
    "its objects use are created when it does not declare them. An object the API server would "
    "refuse (a malformed pod or node, a duplicate) is reported on one line (file, document, object, "
    "field) and not served; every other object is. A file that does not parse fails (exit 2).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=6443,
    show_default=True,
    help="TCP port (0 picks a free one).",
)
@click.option("--address", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--write-kubeconfig",
    "kubeconfig",
    type=OutputFile(),
    help="Write a kubeconfig (context kubesched) for the served API to this path (its directory must exist).",
)
@click.option(
    "--bookmark-interval",
    type=FiniteFloat(min=0.1, max=3600),
    default=10.0,
    show_default=True,
    help="Seconds between watch BOOKMARK events.",
)
@click.option(
    "--finalize-deletions/--no-finalize-deletions",
    default=True,
    show_default=True,
    help="Play the kubelet's part in pod deletion: delete a bound pod for good once its "
    "grace period is over (its deletionTimestamp has passed). Without it a deleted bound "
    "pod stays Terminating forever, so `kubectl delete pod` hangs and preemption never "
    "completes. Shorten the wait with `kubectl delete --grace-period=N` or the pod's "
    "terminationGracePeriodSeconds (default 30 s).",
)
@click.option(
    "--detach",
    is_flag=True,
    help="Serve from a background process and return once the API answers (and the kubeconfig is "
    "written): scripts can use it on the next line. Its pid goes to --pid-file, its log to --log-file.",
)
@click.option(
    "--pid-file",
    type=OutputFile(),
    default=None,
    help="With --detach: where to write the server's pid (default: the kubeconfig path + .pid).",
)
@click.option(
    "--log-file",
    type=OutputFile(),
    default=None,
    help="With --detach: the server's log (default: the kubeconfig path + .log).",
)
@click.option(
    "--token-auth-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Static tokens TokenReview authenticates (kube-apiserver's CSV format: "
    'token,user,uid,"group1,group2").',
)
@click.option(
    "--authorization-policy-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="ABAC policy SubjectAccessReview answers with (kube-apiserver's format: one "
    "abac.authorization.kubernetes.io/v1beta1 Policy JSON object per line).",
)
@click.option(
    "--kubelet",
    "kubelet",
    is_flag=True,
    help="Run a kubelet on every node: the replay's kubelet image model pulls the images of bound "
    "pods (serialized pulls, layers, bandwidth, image GC) and writes kubelet Events, pod status "
    "(Running, conditions, containerStatuses) and node status.images. A pod with the annotation "
    "kubesched.io/run-seconds succeeds that many seconds after its start. A fake DRA driver "
    "publishes the GPUs of each node (its nvidia.com/gpu allocatable, or the annotation "
    "gpu.kubesched.io/devices) as a ResourceSlice of driver gpu.kubesched.io, with the "
    "DeviceClass gpu.kubesched.io. Nodes post Ready and "
    "renew their kube-node-lease Lease; annotating a node kubesched.io/kubelet-stopped stops its "
    "kubelet (the node turns Unknown and tainted unreachable after 50 s, its pods are evicted "
    "after their tolerationSeconds).",
)
@click.option(
    "--kubelet-config",
    "kubelet_config",
    type=click.Path(exists=True, dir_okay=False),
    help="YAML of kubelet image-model settings (camelCase, as `replay --kubelet`); needs --kubelet.",
)
@click.option(
    "--images",
    "images_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Image catalogue YAML for --kubelet (default: the shipped one); images missing from it "
    "are modelled as one 100 MB layer.",
)
@speed_flag(
    help="Run the cluster's clock this many times faster than wall time (timestamps, pulls, "
    "run times, grace periods). Other than 1, the times clients write (Event times, status "
    "condition times they change) are replaced by the cluster's clock when received, so "
    "the scheduler's and the kubelets' times share one timeline.",
)
@click.option(
    "--enable-test-hooks",
    is_flag=True,
    help="Serve the fault-injection hooks under /kubesched/ (faults, drop-watches, compact, "
    "requests) for integration tests of API clients. Never on a shared machine.",
)
@click.option(
    "--allowed-host",
    "allowed_hosts",
    multiple=True,
    metavar="NAME",
    help="Host name clients may use in the Host header besides IP addresses, localhost and "
    "--address (requests naming other hosts get 403, against DNS rebinding); repeatable.",
)
def serve(
    files: tuple[str, ...],
    port: int,
    address: str,
    kubeconfig: str | None,
    bookmark_interval: float,
    finalize_deletions: bool,
    detach: bool,
    pid_file: str | None,
    log_file: str | None,
    token_auth_file: str | None,
    authorization_policy_file: str | None,
    kubelet: bool,
    kubelet_config: str | None,
    images_path: str | None,
    speed: float,
    enable_test_hooks: bool,
    allowed_hosts: tuple[str, ...],
) -> None:
    """Serve an embedded cluster (optionally loaded from manifests) as a Kubernetes API over plain
    HTTP, without authentication, until interrupted. kubectl and the official clients work against
    it: the v1.35 OpenAPI v2 and v3 schemas are served, so kubectl validates (no --validate=false)
    and `kubectl explain` works; request bodies may be JSON, YAML, Kubernetes protobuf or a patch,
    at most 3 MiB; requests from web pages are refused. A PV controller
    binds claims to the volumes the scheduler chose and provisions volumes for claims with a
    selected node. Without --kubelet there are no kubelets: pods are never started, and deletions
    of bound pods complete when their grace period ends (see --finalize-deletions). TokenReview and
    SubjectAccessReview are answered from --token-auth-file and --authorization-policy-file, so a
    scheduler's secure port can delegate to it."""
    if (kubelet_config or images_path) and not kubelet:
        raise click.UsageError("--kubelet-config and --images need --kubelet")
    opts = ServeOptions(
        files=files,
        address=address,
        port=port,
        kubeconfig=kubeconfig,
        bookmark_interval=bookmark_interval,
        finalize_deletions=finalize_deletions,
        token_auth_file=token_auth_file,
        authorization_policy_file=authorization_policy_file,
        kubelet=kubelet,
        kubelet_config=kubelet_config,
        images_path=images_path,
        speed=speed,
        enable_test_hooks=enable_test_hooks,
        allowed_hosts=allowed_hosts,
    )
    if detach:
        setup_reviews(opts)  # a bad token or policy file fails here, before the background process starts
        serve_detached(sys.argv, kubeconfig, pid_file, log_file)
        return
    run(setup(opts))


@dataclass(frozen=True)
class ServeOptions:
    """``kubesched serve``'s flags (see the command's help): manifests ``files``, where to listen
    (``address``, ``port``; 0: any free port), the kubeconfig to write, watch BOOKMARK interval
    (seconds), deletion finalizing, the review files, kubelets and their settings, the clock's
    ``speed``, test hooks and allowed Host names."""

    files: tuple[str, ...] = ()
    address: str = "127.0.0.1"
    port: int = 6443
    kubeconfig: str | None = None
    bookmark_interval: float = 10.0
    finalize_deletions: bool = True
    token_auth_file: str | None = None
    authorization_policy_file: str | None = None
    kubelet: bool = False
    kubelet_config: str | None = None
    images_path: str | None = None
    speed: float = 1.0
    enable_test_hooks: bool = False
    allowed_hosts: tuple[str, ...] = ()


@dataclass(frozen=True)
class ServeGraph:
    """What :func:`run` serves: the store, its API server (not listening yet), the kubelets and the
    fake DRA driver publishing the nodes' GPUs as ResourceSlices (``--kubelet``; not started yet)."""

    options: ServeOptions
    clock: RealClock
    cluster: MemoryCluster
    server: ServerHandle
    kubelets: LiveKubelets | None
    gpu_driver: FakeGPUDriver | None


def setup_reviews(opts: ServeOptions) -> Reviews:
    """The tokens and policies TokenReview/SubjectAccessReview answer with. Raises ConfigError
    naming the file for a malformed line."""
    return Reviews(
        load_token_file(opts.token_auth_file) if opts.token_auth_file else {},
        load_policy_file(opts.authorization_policy_file) if opts.authorization_policy_file else [],
    )


def setup(opts: ServeOptions) -> ServeGraph:
    """Build the embedded cluster ``serve`` serves: the manifests loaded and checked (KubeschedError
    for a file that does not parse; one ``error: not served: ...`` line per malformed object, which
    is left out; warnings for skipped kinds and unknown fields), the store at a new
    resourceVersion epoch, the API server with the PV controller, the kubelets (ConfigError for a
    bad settings file or catalogue). Nothing listens or runs yet."""
    check_listen(opts.address, opts.port)  # before the manifests are loaded
    reviews = setup_reviews(opts)
    clock = RealClock(opts.speed)
    objects: list[dict[str, Any]] = []
    if opts.files:
        loaded = load_manifests(list(opts.files))
        for line in loaded.warnings():
            click.echo(f"warning: {line}", err=True)
        kept, problems = check_manifests(loaded.manifests)
        for line in problems:
            click.echo(f"error: not served: {line}", err=True)
        objects = [m.obj for m in kept]
    # a new resourceVersion epoch: watches from an earlier server's history get 410 and re-list
    cluster = MemoryCluster(
        clock, uid_seed=None, first_resource_version=epoch_resource_version(clock, objects)
    )
    cluster.load(objects)
    server = setup_server(
        cluster,
        address=opts.address,
        port=opts.port,
        clock=clock,
        bookmark_interval=opts.bookmark_interval,
        finalize_deletions=opts.finalize_deletions,
        reviews=reviews,
        controllers=True,
        enable_test_hooks=opts.enable_test_hooks,
        allowed_hosts=opts.allowed_hosts,
        server_client_times=opts.speed != 1.0,
        workload_controllers=True,
    )
    kubelets = driver = None
    if opts.kubelet:
        settings = KubeletImageConfig.from_mapping(
            read_kubelet_settings(opts.kubelet_config), opts.kubelet_config or ""
        )
        kubelets = LiveKubelets(cluster, clock, load_catalogue(opts.images_path), settings)
        driver = FakeGPUDriver(cluster)
    return ServeGraph(opts, clock, cluster, server, kubelets, driver)


def run(graph: ServeGraph) -> None:
    """Listen (ListenError naming ``--address``/``--port`` when the address cannot be bound), write
    the kubeconfig, start the kubelets and serve until SIGINT/SIGTERM."""
    opts = graph.options
    try:
        handle = graph.server.start()
    except OSError as e:
        raise ListenError(opts.address, opts.port, "--address, --port", e) from None
    if opts.kubeconfig:
        write_kubeconfig(opts.kubeconfig, handle.url)
        click.echo(f"wrote kubeconfig {opts.kubeconfig} (context kubesched)", err=True)
    if graph.kubelets is not None:
        graph.kubelets.start()
        # the kubelets' heartbeats, and the controllers that act when they stop
        NodeHeartbeats(graph.cluster, graph.clock).start()
        NodeLifecycleController(graph.cluster, graph.clock).start()
        TaintEvictionController(graph.cluster, graph.clock).start()
    if graph.gpu_driver is not None:
        graph.gpu_driver.start()
    if opts.kubelet:
        click.echo(
            f"kubelets and the gpu.kubesched.io DRA driver running on every node (clock speed {opts.speed:g}x)",
            err=True,
        )
    counts = ", ".join(f"{n} {k}" for k, n in sorted(graph.cluster.counts().items()))
    click.echo(f"serving the embedded cluster ({counts}) at {handle.url}", err=True)
    serve_forever(handle)
