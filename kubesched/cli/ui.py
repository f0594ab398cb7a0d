"""``kubesched ui``: a web page over a snapshot or a live cluster (see docs/ui.md).

The command parses its flags into :class:`UiOptions`; :func:`setup` builds the object graph (the
snapshot session or the live session on its client, the server) and :func:`run` serves it until
interrupted (as ``kubesched run``'s ``setup``/``run``)."""

from __future__ import annotations

import os
import ssl
from dataclasses import dataclass
from pathlib import Path

import click

from kubesched.cli.cluster_read import read_cluster
from kubesched.cli.ports import check_listen
from kubesched.client.kube import KubeClusterClient
from kubesched.config.load import load_config_text
from kubesched.embedded.manifests import load_manifests
from kubesched.errors import ConfigError, ListenError
from kubesched.serving.tls import server_context
from kubesched.ui.security import is_loopback
from kubesched.ui.server import UiServer, new_token
from kubesched.ui.session import LiveSession, Session


@click.command()
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    type=click.Path(),
    help="Snapshot manifest file or directory (YAML, JSON, kind: List); repeatable.",
)
@click.option("-R", "--recursive", is_flag=True, help="Also read the subdirectories of -f directories.")
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="Follow this cluster (a real one or `kubesched serve`) instead of a snapshot; never written to.",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="A KubeSchedulerConfiguration (v1) file: the profile runs and what-ifs start from.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Tie-breaking seed of every simulation run."
)
@click.option(
    "--address",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; a non-loopback address requires a token.",
)
@click.option(
    "--port", type=int, default=8080, show_default=True, help="Port to listen on (0: any free port)."
)
@click.option(
    "--token",
    envvar="KUBESCHED_UI_TOKEN",
    default=None,
    help="Require this token (Authorization: Bearer, or the URL printed at start-up); "
    "generated when --address is not loopback. Env: KUBESCHED_UI_TOKEN.",
)
@click.option(
    "--tls-cert-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Serve HTTPS with this certificate (PEM); with --tls-private-key-file.",
)
@click.option(
    "--tls-private-key-file",
    type=click.Path(dir_okay=False),
    default=None,
    help="The certificate's private key (PEM, unencrypted).",
)
def ui(
    files: tuple[str, ...],
    recursive: bool,
    kubeconfig: str | None,
    config_path: str | None,
    seed: int,
    address: str,
    port: int,
    token: str | None,
    tls_cert_file: str | None,
    tls_private_key_file: str | None,
) -> None:
    """Serve a web UI: the cluster, why a pod is pending, and what-if runs of a changed profile."""
    if bool(files) == bool(kubeconfig):
        raise click.UsageError("give either -f snapshot.yaml (repeatable) or --kubeconfig")
    if bool(tls_cert_file) != bool(tls_private_key_file):
        raise click.UsageError("--tls-cert-file and --tls-private-key-file go together")
    run(
        setup(
            UiOptions(
                files=files,
                recursive=recursive,
                kubeconfig=kubeconfig,
                config_path=config_path,
                seed=seed,
                address=address,
                port=port,
                token=token,
                tls_cert_file=tls_cert_file,
                tls_private_key_file=tls_private_key_file,
            )
        )
    )


@dataclass(frozen=True)
class UiOptions:
    """``kubesched ui``'s flags (see the command's help): a snapshot (``files``) or a live cluster
    (``kubeconfig``), the configuration file, the runs' seed, where to listen, the token and TLS files."""

    files: tuple[str, ...] = ()
    recursive: bool = False
    kubeconfig: str | None = None
    config_path: str | None = None
    seed: int = 0
    address: str = "127.0.0.1"
    port: int = 8080
    token: str | None = None
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None


@dataclass(frozen=True)
class UiGraph:
    """What :func:`run` serves: the snapshot session or the live session (not following yet) and
    the server (not listening yet)."""

    session: Session | None
    live: LiveSession | None
    server: UiServer


def setup(opts: UiOptions) -> UiGraph:
    """Build the UI: read the configuration (ConfigError naming the file), the TLS context, the token
    (generated for a non-loopback address), the snapshot session from the manifests or the live
    session on a client of ``kubeconfig`` (ConfigError for a bad kubeconfig, KubeschedError for an
    unreachable cluster), the server. ListenError when the port is taken."""
    check_listen(opts.address, opts.port)  # before the snapshot is loaded and simulated
    config_text = None
    source = "config.yaml"
    config = None
    if opts.config_path:
        try:
            config_text = Path(opts.config_path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError("", f"cannot read config file: {e}", opts.config_path) from None
        source = os.path.basename(opts.config_path)
        config = load_config_text(config_text, opts.config_path)
    ssl_context: ssl.SSLContext | None = None
    if opts.tls_cert_file and opts.tls_private_key_file:
        ssl_context = server_context(opts.address, opts.tls_cert_file, opts.tls_private_key_file)
    token = opts.token
    if not is_loopback(opts.address) and not token:
        token = new_token()
    session = live = None
    if opts.files:
        loaded = load_manifests(list(opts.files), recursive=opts.recursive)
        for line in loaded.warnings():
            click.echo(f"warning: {line}", err=True)
        session = Session(
            loaded.manifests, config_text, config_source=source, seed=opts.seed, sources=list(opts.files)
        )
    else:
        # one request first: an unreachable cluster is one error line, not a page that never loads
        read_cluster(opts.kubeconfig, None, lambda c: c.list("Namespace"))
        client = KubeClusterClient.from_kubeconfig(opts.kubeconfig, qps=50, burst=100)
        live = LiveSession(client, config_text, config_source=source, config=config)
    server = UiServer(
        session=session, live=live, address=opts.address, port=opts.port, token=token, ssl_context=ssl_context
    )
    return UiGraph(session, live, server)


def run(graph: UiGraph) -> None:
    """Simulate the snapshot once (its summary to stderr) or start following the live cluster, then
    serve until interrupted (Ctrl-C); the live session stops with it."""
    if graph.session is not None:
        result = graph.session.run(graph.session.config_text)
        counts = ", ".join(f"{n} {s.lower()}" for s, n in sorted(result.summary()["counts"].items()))
        click.echo(
            f"simulated {len(result.result.pods)} pods in {result.wall_seconds:.1f} s ({counts or 'none'})",
            err=True,
        )
    if graph.live is not None:
        graph.live.start()
    try:
        graph.server.serve_forever(lambda url: click.echo(f"kubesched ui: serving {url}", err=True))
    except OSError as e:
        raise ListenError(graph.server.address, graph.server.port, "--address, --port", e) from None
    finally:
        if graph.live is not None:
            graph.live.stop()
