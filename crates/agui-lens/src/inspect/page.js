// agui-lens inspect: selection, the state at the selected event, and table filters.
// Plain JavaScript, no dependencies; everything it needs is embedded in #data.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('data').textContent);
  var frames = data.frames;
  var rows = Array.prototype.slice.call(document.querySelectorAll('#events tbody tr'));
  var lanes = Array.prototype.slice.call(document.querySelectorAll('.lane[data-first]'));
  var cursor = document.getElementById('cursor');
  var stateAtEl = document.getElementById('state-at');
  var stateView = document.getElementById('state-view');
  var eventView = document.getElementById('event-view');

  function num(el, key) { return Number(el.getAttribute('data-' + key)); }

  // JSON Pointer segments: "/a~1b/0" is ["a/b", "0"].
  function segments(pointer) {
    if (pointer === '') return [];
    return pointer.split('/').slice(1).map(function (s) {
      return s.replace(/~1/g, '/').replace(/~0/g, '~');
    });
  }

  function copy(value) { return JSON.parse(JSON.stringify(value)); }

  // Sets (or removes) the value at a pointer; returns the (possibly new) root.
  function put(root, pointer, value, remove) {
    var segs = segments(pointer);
    if (segs.length === 0) return remove ? null : copy(value);
    var node = root;
    for (var i = 0; i < segs.length - 1; i++) {
      if (node === null || typeof node !== 'object') return root;
      node = Array.isArray(node) ? node[Number(segs[i])] : node[segs[i]];
    }
    if (node === null || typeof node !== 'object') return root;
    var last = segs[segs.length - 1];
    if (Array.isArray(node)) {
      if (remove) node.splice(Number(last), 1); else node[Number(last)] = copy(value);
    } else if (remove) {
      delete node[last];
    } else {
      node[last] = copy(value);
    }
    return root;
  }

  // A frame's changes: removals last to first (array tails shrink from the end), then sets.
  function applyChanges(root, changes) {
    var i;
    for (i = changes.length - 1; i >= 0; i--) {
      if (changes[i].length === 1) root = put(root, changes[i][0], null, true);
    }
    for (i = 0; i < changes.length; i++) {
      if (changes[i].length === 2) root = put(root, changes[i][0], changes[i][1], false);
    }
    return root;
  }

  // The state after an event: the last frame at or before it, rebuilt from the whole state
  // its thread last embedded.
  function stateAt(index) {
    var lo = 0, hi = frames.length - 1, at = -1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1;
      if (frames[mid].e <= index) { at = mid; lo = mid + 1; } else { hi = mid - 1; }
    }
    if (at < 0) return null;
    var thread = frames[at].t, chain = [];
    for (var i = at; i >= 0; i--) {
      if (frames[i].t !== thread) continue;
      chain.push(frames[i]);
      if ('w' in frames[i]) break;
    }
    var state = null;
    for (var j = chain.length - 1; j >= 0; j--) {
      state = 'w' in chain[j] ? copy(chain[j].w) : applyChanges(state, chain[j].c);
    }
    return { state: state, from: frames[at].e };
  }

  // The row that holds an event; none when the table does not (it holds the first rows only).
  function rowFor(index) {
    for (var i = 0; i < rows.length; i++) {
      if (num(rows[i], 'last') >= index) {
        return num(rows[i], 'first') <= index ? rows[i] : null;
      }
    }
    return null;
  }

  function select(index, row) {
    row = row || rowFor(index);
    rows.forEach(function (r) { r.classList.toggle('selected', r === row); });
    lanes.forEach(function (lane) {
      lane.classList.toggle('active', num(lane, 'first') <= index && index <= num(lane, 'last'));
    });
    var found = stateAt(index);
    if (found === null) {
      stateAtEl.textContent = 'No state before event #' + index + '.';
      stateView.textContent = '';
    } else {
      stateAtEl.textContent = 'State after event #' + index +
        (found.from === index ? '' : ' (last changed at #' + found.from + ')') + ':';
      stateView.textContent = JSON.stringify(found.state, null, 2);
    }
    if (row) {
      var entry = data.rows[num(row, 'row')];
      var text = entry.t;
      if (entry.m !== undefined) {
        text += '\n\n' + row.cells[2].textContent + ', deltas together:\n' + entry.m;
      }
      eventView.textContent = text;
      var x = num(row, 'x');
      cursor.hidden = false;
      cursor.style.left = 'calc(var(--label) + (100% - var(--label)) * ' + x + ')';
    } else {
      eventView.textContent = 'Event #' + index + ' is not among the rows the table holds ' +
        '(see the note above it): `agui-lens cat FILE --from ' + index + ' --to ' + index +
        '` prints it.';
    }
    if (data.capped !== undefined && index > data.capped) {
      stateAtEl.textContent += ' (not kept: the state history is capped)';
    }
  }

  var filter = document.getElementById('filter');
  var typeFilter = document.getElementById('type-filter');
  var problemsOnly = document.getElementById('problems-only');
  var shown = document.getElementById('shown');

  function applyFilters() {
    var q = filter.value.toLowerCase(), type = typeFilter.value, only = problemsOnly.checked;
    var count = 0;
    rows.forEach(function (r) {
      var ok = (!type || r.getAttribute('data-type') === type) &&
        (!only || r.classList.contains('problem')) &&
        (!q || r.textContent.toLowerCase().indexOf(q) >= 0);
      r.hidden = !ok;
      if (ok) count++;
    });
    shown.textContent = count + ' of ' + rows.length + ' rows';
  }

  filter.addEventListener('input', applyFilters);
  typeFilter.addEventListener('change', applyFilters);
  problemsOnly.addEventListener('change', applyFilters);

  document.querySelector('#events tbody').addEventListener('click', function (e) {
    var row = e.target.closest('tr');
    if (row) select(num(row, 'last'), row);
  });

  function jump(index) {
    var row = rowFor(index);
    select(index, row);
    if (row) row.scrollIntoView({ block: 'nearest' });
  }

  document.addEventListener('click', function (e) {
    var target = e.target.closest('[data-event], .lane[data-first]');
    if (!target || target.closest('#events')) return;
    jump(target.hasAttribute('data-event') ? num(target, 'event') : num(target, 'first'));
  });

  applyFilters();
  if (rows.length > 0) select(num(rows[rows.length - 1], 'last'), rows[rows.length - 1]);
  document.body.setAttribute('data-ready', 'yes');
})();
