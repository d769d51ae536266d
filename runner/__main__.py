"""python3 -m runner: the same as python3 -m runner.allocmark."""
import sys

from runner.allocmark import main

sys.exit(main())
