"""Reading tuning records (AutoTVM's JSON lines) for the bench scripts."""
import json


def successful(path):
    """Each successful trial of the file as (record, mean seconds, shape key);
    torn or foreign lines are passed over."""
    for line in open(path):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        costs, error_no = rec["result"][0], rec["result"][1]
        if error_no != 0 or not costs:
            continue
        yield rec, sum(costs) / len(costs), json.dumps(rec["input"][2])
