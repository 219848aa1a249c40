"""Running cases: compilers and their doubles' base, one program in one mode, the judge, workers, campaigns."""
