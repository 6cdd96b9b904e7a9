"""``python -m aqmlab.cli``: the fast paths first, before typer and rich are imported."""

import sys

from ..fastcli import try_fast

if not try_fast(sys.argv[1:]):
    from . import main

    main()
