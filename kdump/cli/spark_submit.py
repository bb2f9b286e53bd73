"""Entry point for ``spark-submit``: the ``kdump spark`` commands under a cluster manager.

    spark-submit --master spark://HOST:7077 "$(python -c 'import kdump.cli.spark_submit as m; print(m.__file__)')" \\
        export /mnt/kafka-logs --output /mnt/out

The master (and every other Spark setting) then comes from ``spark-submit``; the arguments are those of
``kdump spark``.
"""

from __future__ import annotations

import sys

from kdump.cli.spark import command


def main(argv: list[str] | None = None) -> None:
    command.main(args=sys.argv[1:] if argv is None else argv, prog_name="kdump spark")


if __name__ == "__main__":
    main()
