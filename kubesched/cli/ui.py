"""``kubesched ui``: a web page over a snapshot or a live cluster (see docs/ui.md)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from kubesched.errors import ConfigError


@click.command()
@click.option("-f", "--filename", "files", multiple=True, type=click.Path(),
              help="Snapshot manifest file or directory (YAML, JSON, kind: List); repeatable.")
@click.option("-R", "--recursive", is_flag=True, help="Also read the subdirectories of -f directories.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="Follow this cluster (a real one or `kubesched serve`) instead of a snapshot; never written to.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="A KubeSchedulerConfiguration (v1) file: the profile runs and what-ifs start from.")
@click.option("--seed", type=int, default=0, show_default=True, help="Tie-breaking seed of every simulation run.")
@click.option("--address", default="127.0.0.1", show_default=True,
              help="Address to listen on; a non-loopback address requires a token.")
@click.option("--port", type=int, default=8080, show_default=True, help="Port to listen on (0: any free port).")
@click.option("--token", envvar="KUBESCHED_UI_TOKEN", default=None,
              help="Require this token (Authorization: Bearer, or the URL printed at start-up); "
                   "generated when --address is not loopback. Env: KUBESCHED_UI_TOKEN.")
@click.option("--tls-cert-file", type=click.Path(dir_okay=False), default=None,
              help="Serve HTTPS with this certificate (PEM); with --tls-private-key-file.")
@click.option("--tls-private-key-file", type=click.Path(dir_okay=False), default=None,
              help="The certificate's private key (PEM, unencrypted).")
def ui(files: tuple[str, ...], recursive: bool, kubeconfig: str | None, config_path: str | None, seed: int,
       address: str, port: int, token: str | None, tls_cert_file: str | None, tls_private_key_file: str | None) -> None:
    """Serve a web UI: the cluster, why a pod is pending, and what-if runs of a changed profile."""
    from kubesched.config.load import load_config_text
    from kubesched.embedded.manifests import load_manifests
    from kubesched.ui.security import is_loopback
    from kubesched.ui.server import UiServer, new_token
    from kubesched.ui.session import LiveSession, Session

    if bool(files) == bool(kubeconfig):
        raise click.UsageError("give either -f snapshot.yaml (repeatable) or --kubeconfig")
    config_text = None
    source = "config.yaml"
    config = None
    if config_path:
        try:
            config_text = Path(config_path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ConfigError("", f"cannot read config file: {e}", config_path) from None
        source = os.path.basename(config_path)
        config = load_config_text(config_text, config_path)
    if bool(tls_cert_file) != bool(tls_private_key_file):
        raise click.UsageError("--tls-cert-file and --tls-private-key-file go together")
    ssl_context = None
    if tls_cert_file and tls_private_key_file:
        from kubesched.serving.tls import server_context

        ssl_context = server_context(address, tls_cert_file, tls_private_key_file)
    if not is_loopback(address) and not token:
        token = new_token()
    session = live = None
    if files:
        loaded = load_manifests(list(files), recursive=recursive)
        for kind, count in sorted(loaded.skipped_kinds.items()):
            click.echo(f"warning: skipped {count} object(s) of unsupported kind {kind}", err=True)
        session = Session(loaded.manifests, config_text, config_source=source, seed=seed, sources=list(files))
        run = session.run(config_text)
        counts = ", ".join(f"{n} {s.lower()}" for s, n in sorted(run.summary()["counts"].items()))
        click.echo(f"simulated {len(run.result.pods)} pods in {run.wall_seconds:.1f} s ({counts or 'none'})", err=True)
    else:
        from kubesched.client.kube import KubeClusterClient

        client = KubeClusterClient.from_kubeconfig(kubeconfig, qps=50, burst=100)
        live = LiveSession(client, config_text, config_source=source, config=config)
        live.start()
    server = UiServer(session=session, live=live, address=address, port=port, token=token, ssl_context=ssl_context)
    try:
        server.serve_forever(lambda url: click.echo(f"kubesched ui: serving {url}", err=True))
    finally:
        if live is not None:
            live.stop()
