"""Which torch releases a bug affects: `dynfuzz releases`.

- `environments`: one virtual environment per torch release under the cache folder, built on demand, locked,
  reused, listed, removable, within a size cap (least recently used first out);
- `installer`: how an environment is built (pip), or adopted from an existing one; tests inject a fake;
- `probe`: what runs inside a release's environment: one repro judged the way `dynfuzz replay` judges it;
- `repros`: the repros a `releases check` is given (corpus files, bucket folders, a campaign's buckets);
- `matrix`: every repro on every release, in parallel, the outcome per release and the verdict;
- `bisect`: the first failing (or passing) release between two, over every installable release;
- `campaign_folder`: the matrix written back into a campaign (`summary.json`, bucket reports, the report);
- `known_verifier`: a known issue checked on a release its entry does not list, once, cached.
"""
