import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
for ca, cb in zip(a['by_kind'], b['by_kind']):
    print(f"{ca['kind']:8} {ca['speed']:4}: {ca['goals_against']:3} -> {cb['goals_against']:3}  {cb['goals_against_by_kind']}")
print('total', a['total']['goals_against'], a['total']['goals_against_by_kind'], '->', b['total']['goals_against'], b['total']['goals_against_by_kind'])
ga = {(e['kind'], e['speed'], e['seed']): e['goals_against'] for e in a['episodes']}
gb = {(e['kind'], e['speed'], e['seed']): e['goals_against'] for e in b['episodes']}
print('new goals', [k for k in gb if gb[k] > ga[k]])
print('gone', [k for k in gb if gb[k] < ga[k]])
