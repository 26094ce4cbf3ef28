"""``python -m gateway.cli``: the same as the ``tierclaw`` command."""

import sys

from gateway.cli.main import main

sys.exit(main())
