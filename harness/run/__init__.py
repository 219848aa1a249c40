"""Running one case: compilers and their doubles' base, one program in one mode, the judge, isolation, the
observers of Dynamo's behaviours, torch compatibility. Campaigns are in `dynfuzz.campaign`."""
