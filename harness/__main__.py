import sys

from dynfuzz.cli import main

sys.exit(main())
