"""The installed package says under which terms it is distributed: pyproject's ``license`` reaches the
metadata pip shows, and the licence file ships with it: Apache-2.0 (README.md, "Licence")."""

from __future__ import annotations

import tomllib
from importlib.metadata import metadata

from tests.support import REPO


def test_the_installed_metadata_names_the_licence_of_pyproject_and_ships_its_file() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    installed = metadata("tierclaw")

    assert project["license"] == "Apache-2.0"
    assert installed["License-Expression"] == project["license"]
    assert installed.get_all("License-File") == project["license-files"]
    for name in project["license-files"]:
        text = (REPO / name).read_text(encoding="utf-8")
        assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
        assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
