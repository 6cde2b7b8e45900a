"""A claimed name moves to a second machine through the real ``parlour secret export`` and ``import`` commands."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from client.claims import NameClaims
from client.tokens import SecretStore
from server.app import Server

from .harness import CHECKOUT_PARLOUR, ROOT

pytestmark = pytest.mark.slow


async def parlour(data_home: Path, *args: str) -> tuple[int, str, str]:
    """Run the checkout's ``parlour`` with ``data_home`` as its user data directory; return status, stdout, stderr."""
    process = await asyncio.create_subprocess_exec(
        *CHECKOUT_PARLOUR, *args, cwd=ROOT, env=dict(os.environ, XDG_DATA_HOME=str(data_home)),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode(), err.decode()


async def test_a_name_claimed_on_one_machine_is_played_on_another(server: Server, tmp_path: Path) -> None:
    home, laptop = tmp_path / "home", tmp_path / "laptop"
    said: list[str] = []
    claimed = await NameClaims(SecretStore(home / "parlour" / "secrets.json"), say=said.append).connect("127.0.0.1", server.port, "ann")
    assert claimed.welcome is not None and claimed.welcome.claimed and said
    await claimed.close()

    status, exported, warning = await parlour(home, "secret", "export", "ann", "--server", f"127.0.0.1:{server.port}")
    assert status == 0 and "Keep this export private" in warning
    assert [entry["name"] for entry in json.loads(exported)["secrets"]] == ["ann"]
    export_file = tmp_path / "ann.secret"
    export_file.write_text(exported)
    status, out, _ = await parlour(laptop, "secret", "import", str(export_file))
    assert status == 0 and out.strip() == f"Imported the secret of ann for 127.0.0.1:{server.port}."
    assert (laptop / "parlour" / "secrets.json").stat().st_mode & 0o777 == 0o600

    there = await NameClaims(SecretStore(laptop / "parlour" / "secrets.json"), say=said.append).connect("127.0.0.1", server.port, "ann")
    assert there.welcome is not None and there.welcome.claimed and len(said) == 1
    await there.close()
