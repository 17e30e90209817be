import sys

from sandbox.server import main

sys.exit(main(sys.argv[1:]))
