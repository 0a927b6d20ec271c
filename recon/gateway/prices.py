"""The pinned price table: generated from the price map the ``litellm`` package ships.

``python -m recon.gateway.prices generate`` downloads the pinned litellm wheel into a
temporary folder with pip (litellm is never a dependency of recon), reads
``model_prices_and_context_window_backup.json`` out of it, keeps the per-token prices of
the Anthropic, OpenAI and Gemini chat models, and writes ``recon/gateway/prices.json`` as
canonical JSON whose header names the wheel and its sha256 (``--wheel PATH`` reads a wheel
already at hand instead). The table's digest is what an attempt is metered against. A
cache read or write the map does not price is priced as input.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from recon.errors import HarnessError
from recon.model.base import load_json
from recon.model.gateway import ModelPrice, PriceSource, PriceTable, Provider
from recon.store.canonical import canonical_json, digest_bytes

LITELLM_VERSION = "1.110.2"
MAP_FILE = "litellm/model_prices_and_context_window_backup.json"
PRICES = Path(__file__).with_name("prices.json")
GENERATED_BY = "python -m recon.gateway.prices generate"
PROVIDERS: dict[str, Provider] = {"anthropic": "anthropic", "openai": "openai", "gemini": "gemini"}
MODES = frozenset({"chat", "responses"})


def generate(price_map: dict[str, Any], source: PriceSource) -> PriceTable:
    """The table of every Anthropic, OpenAI and Gemini chat model the map prices per token."""
    prices: dict[Provider, dict[str, ModelPrice]] = {p: {} for p in PROVIDERS.values()}
    for key, spec in sorted(price_map.items()):
        vendor = spec.get("litellm_provider") if isinstance(spec, dict) else None
        provider = PROVIDERS.get(vendor) if isinstance(vendor, str) else None
        if provider is None or spec.get("mode") not in MODES:
            continue
        price = _price(spec)
        if price is not None:
            prices[provider][key.removeprefix(f"{vendor}/")] = price
    return PriceTable(source=source, generated_by=GENERATED_BY, prices=prices)


def _price(spec: dict[str, Any]) -> ModelPrice | None:
    """Cache reads and writes the map does not price are billed as input."""
    fields = ("input_cost_per_token", "output_cost_per_token")
    if not all(_is_price(spec.get(f)) for f in fields):
        return None
    base = spec["input_cost_per_token"]
    read, write = (
        spec.get("cache_read_input_token_cost"),
        spec.get("cache_creation_input_token_cost"),
    )
    return ModelPrice(
        input=base,
        output=spec["output_cost_per_token"],
        cache_read=read if _is_price(read) else base,
        cache_write=write if _is_price(write) else base,
    )


def _is_price(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1


def render(table: PriceTable) -> bytes:
    """The file's bytes: canonical JSON and a final newline."""
    return canonical_json(table.model_dump(mode="json")) + b"\n"


def load_prices(path: Path = PRICES) -> PriceTable:
    """The table at ``path``; a malformed one is one ConfigError naming the file and field."""
    return load_json(PriceTable, path)


def prices_digest(path: Path = PRICES) -> str:
    """The digest of the table's bytes: what the attempt was metered against."""
    return digest_bytes(path.read_bytes())


def price_for(table: PriceTable, provider: Provider, model: str) -> ModelPrice | None:
    """The price of ``model`` (a Gemini ``models/`` prefix is not part of its name)."""
    return table.prices.get(provider, {}).get(model.removeprefix("models/"))


def read_wheel(wheel: Path) -> tuple[dict[str, Any], PriceSource]:
    """The price map inside a litellm wheel, and where it came from."""
    with zipfile.ZipFile(wheel) as archive:
        price_map = json.loads(archive.read(MAP_FILE))
    sha = hashlib.sha256(wheel.read_bytes()).hexdigest()
    version = wheel.name.split("-")[1]
    source = PriceSource(
        package="litellm", version=version, wheel=wheel.name, wheel_sha256=sha, file=MAP_FILE
    )
    return price_map, source


def download(version: str, into: Path) -> Path:
    """The litellm wheel at ``version``, fetched by pip (no dependencies, nothing installed)."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    proc = subprocess.run(
        [*command, "-d", str(into), f"litellm=={version}"], capture_output=True, text=True
    )
    wheels = sorted(into.glob(f"litellm-{version}-*.whl"))
    if proc.returncode != 0 or not wheels:
        raise HarnessError(f"pip could not download litellm=={version}: {proc.stderr[-400:]}")
    return wheels[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m recon.gateway.prices")
    parser.add_argument("command", choices=["generate"])
    parser.add_argument("--version", default=LITELLM_VERSION, help="litellm version to read")
    parser.add_argument("--out", type=Path, default=PRICES, help="where to write the table")
    parser.add_argument("--wheel", type=Path, help="read this litellm wheel, not a download")
    args = parser.parse_args(argv)
    if args.wheel is not None:
        price_map, source = read_wheel(args.wheel)
    else:
        with tempfile.TemporaryDirectory() as temp:
            price_map, source = read_wheel(download(args.version, Path(temp)))
    args.out.write_bytes(render(generate(price_map, source)))
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
