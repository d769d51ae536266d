"""python3 -m runner: the same as runner/allocmark.py."""
import sys

from runner.allocmark import main

sys.exit(main())
