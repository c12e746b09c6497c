import sys

from mlnn.cli import main

sys.exit(main())
