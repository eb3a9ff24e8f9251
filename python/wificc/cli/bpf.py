"""``wificc bpf build|load|unload|list|set``: the BBR variants as BPF struct_ops congestion
controls of the running kernel (:mod:`wificc.bpf`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Annotated

import typer

from wificc.bpf import BpfError, Knob, build, checked_names, load, set_knobs, status, unload
from wificc.cli.common import app

bpf_app = typer.Typer(
    help="The BBR variants as real Linux congestion controls (BPF struct_ops): wbbr, wbbrp, wbbrn, wbbr_apg, wbbr_pg.",
    no_args_is_help=True,
)
app.add_typer(bpf_app, name="bpf", help="BBR variants as BPF struct_ops congestion controls for real kernels.")

Names = Annotated[list[str] | None, typer.Argument(help="Algorithms (default: all).", show_default=False)]


@contextmanager
def _errors() -> Iterator[None]:
    try:
        yield
    except BpfError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(1) from None


def _knob_text(ks: Iterable[Knob]) -> str:
    return " ".join(f"{k.name}={k.show()}" for k in ks)


@bpf_app.command("build")
def build_cmd() -> None:
    """Compile every variant against the running kernel's BTF (bpf/build/)."""
    with _errors():
        for path in build():
            typer.echo(f"built {path}")


def _apply(names: list[str] | None, action: Callable[[list[str]], list[str]], done: str, skipped: str) -> None:
    """Run `action` on the chosen names and report each as `done` or `skipped`."""
    with _errors():
        chosen = checked_names(names or ())
        changed = action(chosen)
        for name in chosen:
            typer.echo(f"{name}: {done if name in changed else skipped}")


@bpf_app.command("load")
def load_cmd(names: Names = None) -> None:
    """Build if needed and register the algorithms; pins go to /sys/fs/bpf/wificc/NAME/."""
    _apply(names, load, "loaded", "already loaded")


@bpf_app.command("unload")
def unload_cmd(names: Names = None) -> None:
    """Unregister the algorithms and remove their pins."""
    _apply(names, unload, "unloaded", "was not loaded")


@bpf_app.command("list")
def list_cmd(names: Names = None) -> None:
    """Show which algorithms are built and loaded, with their knobs."""
    with _errors():
        for row in status(names or ()):
            if row.ops_id is None:
                state = "built, not loaded" if row.built else "not built"
            else:
                state = f"loaded (struct_ops map {row.ops_id})" + ("" if row.pinned else ", not pinned")
            typer.echo(f"{row.name:<9} {state}" + (f"  {_knob_text(row.knobs)}" if row.knobs else ""))


@bpf_app.command("set")
def set_cmd(
    name: Annotated[str, typer.Argument(help="A loaded algorithm.")],
    assignments: Annotated[list[str], typer.Argument(help="key=value, e.g. bbrp_pace=5.")],
) -> None:
    """Change knobs of a loaded algorithm; running flows use them from their next ACK."""
    with _errors():
        (name,) = checked_names([name])
        typer.echo(f"{name}: {_knob_text(set_knobs(name, assignments))}")
