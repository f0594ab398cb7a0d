"""``kubesched images``: the pull-time model against real pulls (estimate, calibrate)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import yaml

from kubesched.api.document_file import parse_document
from kubesched.atomic_file import atomic_write_text
from kubesched.cli.paths import OutputFile
from kubesched.cli.units import Bytes
from kubesched.errors import ConfigError, KubeschedError

_CATALOGUE_HELP = "Image catalogue YAML (default: the shipped kubesched/data/image-catalogue.yaml)."
_KUBELET_HELP = (
    "YAML of kubelet image-model settings (camelCase, as for `replay --kubelet`; e.g. a file "
    "written by `images calibrate` or one of examples/kubelet/)."
)


@click.group()
def images() -> None:
    """The image pull model: what it predicts, and fitting it to a cluster's real pulls."""


def _kubelet_config(path: str | None) -> Any:
    from kubesched.embedded.kubelet.config import KubeletImageConfig
    from kubesched.embedded.kubelet.settings_file import read_kubelet_settings

    return KubeletImageConfig.from_mapping(read_kubelet_settings(path), path or "")


@images.command()
@click.argument("image_refs", metavar="[IMAGE]...", nargs=-1)
@click.option(
    "--size",
    "size",
    type=Bytes(),
    metavar="SIZE",
    help="Compressed image size (instead of IMAGE): a quantity such as 5Gi, 500MB or 1048576 (bytes).",
)
@click.option(
    "--layers",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Layers of the --size image (default 1).",
)
@click.option("--kubelet", "kubelet_path", type=click.Path(exists=True, dir_okay=False), help=_KUBELET_HELP)
@click.option(
    "--catalogue", "catalogue_path", type=click.Path(exists=True, dir_okay=False), help=_CATALOGUE_HELP
)
@click.option(
    "--registry-settings",
    "registry_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Registry settings YAML for looking IMAGE up in its registry when the catalogue does not "
    "have it: endpoint, TLS, credentials per registry, platform (kubesched.images.registry_settings; "
    "default: HTTPS, no credentials, linux/amd64).",
)
@click.option(
    "--no-registry",
    is_flag=True,
    help="Never contact a registry: an image missing from the catalogue is modelled as one opaque "
    "100 MB layer (source: default).",
)
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
def estimate(
    image_refs: tuple[str, ...],
    size: int | None,
    layers: int | None,
    kubelet_path: str | None,
    catalogue_path: str | None,
    registry_path: str | None,
    no_registry: bool,
    output: str,
) -> None:
    """Print the seconds the pull model predicts for pulling each IMAGE (one row each), or an
    image of --size SIZE in --layers N layers, on an idle node: per-pull cost + per-layer cost + bytes / throughput, with
    the kubelet settings of --kubelet (default: the calibrated defaults). IMAGE's layers come from
    the image catalogue, else from its registry's manifest, else (lookup disabled or failed) one
    opaque 100 MB layer, as `kubesched serve --kubelet` models such an image; the SOURCE column
    (JSON "source": catalogue, registry, default, size) says which, and a note why the default
    was used. Hold it against the `Successfully pulled image ... in Xs` events of your own nodes.
    With -o json, one JSON object per image and line."""
    from kubesched.images.estimate import estimate_image, estimate_size

    if bool(image_refs) == (size is not None):
        raise click.UsageError("give either IMAGE (one or more) or --size SIZE")
    if layers is not None and size is None:
        raise click.UsageError("--layers goes with --size")
    if no_registry and registry_path is not None:
        raise click.UsageError("--no-registry and --registry-settings exclude each other")
    model = _kubelet_config(kubelet_path).pull_model()
    if not image_refs:
        assert size is not None
        results = [estimate_size(model, size, layers or 1)]
    else:
        from kubesched.images.catalogue import load_catalogue

        catalogue = load_catalogue(catalogue_path)
        client = None if no_registry else _registry_client(registry_path)
        try:
            results = [estimate_image(ref, model, catalogue, client) for ref in image_refs]
        finally:
            if client is not None:
                client.close()
    if output == "json":
        for result in results:
            click.echo(json.dumps(result.to_dict()))
        return
    width = max(len("IMAGE"), *(len(r.image or "-") for r in results))
    click.echo(f"{'IMAGE':<{width}}  {'BYTES':>14}  {'LAYERS':>6}  {'SECONDS':>8}  SOURCE")
    for r in results:
        click.echo(f"{r.image or '-':<{width}}  {r.bytes:>14}  {r.layers:>6}  {r.seconds:>8.3f}  {r.source}")
    for r in results:
        if r.note:
            click.echo(f"note: {r.image}: {r.note}" if len(results) > 1 else f"note: {r.note}")


def _registry_client(settings_path: str | None) -> Any:
    from kubesched.images.registry import RegistryClient
    from kubesched.images.registry_settings import load_registry_settings

    return RegistryClient(load_registry_settings(settings_path))


def _registry_image(image: str, settings_path: str | None) -> Any:
    client = _registry_client(settings_path)
    try:
        return client.image_layers(image)
    finally:
        client.close()


@images.command()
@click.argument("image")
@click.option(
    "--registry-settings",
    "registry_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Registry settings YAML: endpoint, TLS, credentials per registry, platform "
    "(kubesched.images.registry_settings; default: HTTPS, no credentials, linux/amd64).",
)
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
def layers(image: str, registry_path: str | None, output: str) -> None:
    """Fetch IMAGE's manifest from its registry (OCI distribution API: index -> platform manifest)
    and print its layers: digest and compressed bytes, bottom first."""
    got = _registry_image(image, registry_path)
    if output == "json":
        click.echo(
            json.dumps(
                {
                    "image": got.ref.canonical,
                    "digest": got.digest,
                    "manifestDigest": got.manifest_digest,
                    "mediaType": got.media_type,
                    "bytes": got.size_bytes,
                    "layers": [{"digest": d, "size": n} for d, n in got.layers],
                }
            )
        )
        return
    click.echo(f"{got.ref.canonical}  {got.digest}  ({len(got.layers)} layers, {got.size_bytes} bytes)")
    for d, n in got.layers:
        click.echo(f"  {d}  {n:>14}")


def _read_events_file(path: str) -> list[Any]:
    """Pulled events in ``path``: an EventList / list of Events (JSON or YAML, e.g. ``kubectl get
    events -A -o json``), or text with one kubelet message per line (``kubectl describe`` output)."""
    from kubesched.embedded.kubelet.pulled_events import pulled_events, pulled_events_in_text

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise KubeschedError(f"--events {path}: cannot read: {getattr(e, 'strerror', None) or e}") from None
    try:
        doc: Any = parse_document(text, path)  # bounded, as every YAML/JSON input
    except ConfigError:
        doc = None  # not YAML: text lines
    if isinstance(doc, dict):
        if isinstance(doc.get("items"), list):
            doc = doc["items"]
        elif "reason" in doc:
            doc = [doc]
    if isinstance(doc, list):
        return list(pulled_events(doc))
    return list(pulled_events_in_text(text))


def _cluster_events(kubeconfig: str, context: str | None) -> list[Any]:
    from kubesched.cli.cluster_read import read_cluster
    from kubesched.embedded.kubelet.pulled_events import pulled_events

    return list(pulled_events(read_cluster(kubeconfig, context, lambda client: client.list("Event").items)))


@images.command()
@click.option(
    "--kubeconfig",
    type=click.Path(exists=True, dir_okay=False),
    help="Read the Pulled events of this cluster (all namespaces).",
)
@click.option("--context", default=None, help="kubeconfig context (default: the current one).")
@click.option(
    "--events",
    "events_path",
    type=click.Path(exists=True),
    help="Read Pulled events from a file: `kubectl get events -A -o json|yaml` output, or text "
    "lines holding kubelet messages (`kubectl describe pod` output, kubelet logs); or from a "
    "`kubesched record` directory (pulls that joined another pod's pull are left out).",
)
@click.option(
    "--kubelet",
    "kubelet_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Base kubelet settings: kept in the output, and their layerLatencySeconds is used in the fit.",
)
@click.option(
    "--catalogue",
    "catalogue_path",
    type=click.Path(exists=True, dir_okay=False),
    help=_CATALOGUE_HELP + " It gives the layer counts (and sizes, for events without one).",
)
@click.option(
    "--registry-settings",
    "registry_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Look up the layer counts of images missing from the catalogue in their registries.",
)
@click.option(
    "--output",
    "out_path",
    type=OutputFile(),
    default=None,
    help="Write the kubelet-model file here (default: print it).",
)
def calibrate(
    kubeconfig: str | None,
    context: str | None,
    events_path: str | None,
    kubelet_path: str | None,
    catalogue_path: str | None,
    registry_path: str | None,
    out_path: str | None,
) -> None:
    """Fit the pull model's throughput and per-pull cost to a cluster's kubelet `Pulled` events
    (`Successfully pulled image "X" in 1.2s (3.4s including waiting). Image size: N bytes.`) and
    write a kubelet-model file for `kubesched replay --kubelet` and `images estimate --kubelet`.
    The fit is robust least squares of pull seconds against bytes (see kubesched.embedded.kubelet.calibrate)."""
    from kubesched.embedded.kubelet.calibrate import calibrate as fit
    from kubesched.embedded.kubelet.calibrate import pull_points
    from kubesched.embedded.kubelet.config import KubeletImageConfig
    from kubesched.embedded.kubelet.settings_file import read_kubelet_settings
    from kubesched.images.catalogue import load_catalogue

    if (kubeconfig is None) == (events_path is None):
        raise click.UsageError("give either --kubeconfig or --events")
    base = read_kubelet_settings(kubelet_path)
    config = KubeletImageConfig.from_mapping(base, kubelet_path or "")
    joined = 0
    if kubeconfig:
        events = _cluster_events(kubeconfig, context)
    elif Path(str(events_path)).is_dir():
        from kubesched.modes.record.recording import read_recording, recorded_pulls

        events, joined = recorded_pulls(read_recording(str(events_path)))
    else:
        events = _read_events_file(str(events_path))
    lookup = None
    client = None
    if registry_path is not None:
        from kubesched.images.registry import RegistryClient, RegistryError
        from kubesched.images.registry_settings import load_registry_settings

        client = RegistryClient(load_registry_settings(registry_path))
        registry = client

        def lookup(ref: str) -> Any:
            try:
                return registry.image_layers(ref).to_catalogue_image()
            except RegistryError as e:
                click.echo(f"warning: layers of {ref} unknown: {e}", err=True)
                return None

    try:
        points, skipped = pull_points(events, load_catalogue(catalogue_path), lookup)
    finally:
        if client is not None:
            client.close()
    result = fit(points, config.layer_latency_seconds, skipped)
    settings = {**base, **result.kubelet_settings()}
    KubeletImageConfig.from_mapping(settings, "the fitted settings")  # what replay --kubelet will check
    source = f"--kubeconfig {kubeconfig}" if kubeconfig else f"--events {events_path}"
    header = (
        f"# kubelet image-model settings fitted by `kubesched images calibrate {source}`\n"
        f"# from {result.pulls} pulls ({result.layers_known} with known layer counts, {result.outliers} "
        f"outliers, {result.skipped} skipped without a size):\n"
        f"# {result.bytes_per_second / 1e6:.1f} MB/s, {result.fixed_seconds:.3f} s per pull, "
        f"robust residual scale {result.scale_seconds:.3f} s, median error "
        f"{100 * result.median_relative_error:.1f} %\n"
    )
    text = header + yaml.safe_dump(settings, sort_keys=False)
    click.echo(
        f"fitted {result.pulls} pulls: throughput {result.bytes_per_second / 1e6:.1f} MB/s, "
        f"per-pull cost {result.fixed_seconds:.3f} s, per-layer cost {result.layer_seconds:.3f} s "
        f"(not fitted), {result.outliers} outliers; fit error: median {100 * result.median_relative_error:.1f} % "
        f"of the pull time, robust residual scale {result.scale_seconds:.3f} s"
        + (f"; {joined} joined pulls left out" if joined else ""),
        err=True,
    )
    if out_path:
        atomic_write_text(out_path, text)
        click.echo(f"wrote {out_path}", err=True)
    else:
        click.echo(text, nl=False)
