# -*- coding: utf-8 -*-
# Copyright: netaccess.nac contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Print a closing summary of the unit and integration results of one `make test`.

usage: python tests/tools/test_summary.py COLLECTION_DIR

Reads what ansible-test left in COLLECTION_DIR/tests/output: the pytest junit
file(s) of `ansible-test units` and the data file of `ansible-test integration`
(one entry per target that ran). The last line reads
``tests: N passed, N failed, N skipped`` (unit test cases plus integration
targets).
"""

from __future__ import annotations

import glob
import json
import os
import sys
import xml.etree.ElementTree as ET


def unit_counts(output_dir):
    """Return (passed, failed, skipped) over the pytest junit files of the unit tests."""
    passed = failed = skipped = 0
    for path in sorted(glob.glob(os.path.join(output_dir, 'junit', 'python*-units.xml'))):
        root = ET.parse(path).getroot()
        suites = [root] if root.tag == 'testsuite' else root.iter('testsuite')
        for suite in suites:
            tests = int(suite.get('tests', 0))
            bad = int(suite.get('failures', 0)) + int(suite.get('errors', 0))
            skip = int(suite.get('skipped', 0))
            failed += bad
            skipped += skip
            passed += tests - bad - skip
    return passed, failed, skipped


def integration_targets(output_dir):
    """Return the names of the integration targets that ran in the last integration run."""
    paths = sorted(glob.glob(os.path.join(output_dir, 'data', 'integration-*.json')))
    if not paths:
        return []
    with open(paths[-1], encoding='utf-8') as handle:
        return sorted(json.load(handle).get('targets', {}))


def main(argv):
    """Print the summary; return 1 when a unit test failed."""
    if len(argv) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2

    output_dir = os.path.join(argv[0], 'tests', 'output')
    passed, failed, skipped = unit_counts(output_dir)
    targets = integration_targets(output_dir)

    print('units: %d passed, %d failed, %d skipped' % (passed, failed, skipped))
    print('integration: %d targets passed%s' % (len(targets), (' (%s)' % ', '.join(targets)) if targets else ''))
    print('tests: %d passed, %d failed, %d skipped' % (passed + len(targets), failed, skipped))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
