// SPDX-License-Identifier: Apache-2.0
// A tiny element builder: h('div', {class: 'x', onclick: f}, child, 'text', [more]).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2), v);
    } else if (k === 'dataset') {
      Object.assign(el.dataset, v);
    } else if (k === 'style' && typeof v === 'object') {
      Object.assign(el.style, v);
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function card(title, subtitle, ...body) {
  return h(
    'section',
    { class: 'card' },
    h('div', { class: 'card-head' }, h('h2', {}, title), subtitle ? h('p', { class: 'sub' }, subtitle) : null),
    ...body,
  );
}

export function kpi(label, value, note, tone) {
  return h(
    'div',
    { class: `kpi${tone ? ` kpi-${tone}` : ''}` },
    h('div', { class: 'kpi-label' }, label),
    h('div', { class: 'kpi-value' }, value),
    note ? h('div', { class: 'kpi-note' }, note) : null,
  );
}

export function empty(title, text) {
  return h('div', { class: 'empty' }, h('strong', {}, title), h('p', {}, text));
}

// columns: [{label, cls, value: row => node|string}]
export function table(columns, rows, { onRowClick, rowClass, rowTitle } = {}) {
  return h(
    'table',
    { class: 'grid' },
    h('thead', {}, h('tr', {}, columns.map((c) => h('th', { class: c.cls }, c.label)))),
    h(
      'tbody',
      {},
      rows.map((r) =>
        h(
          'tr',
          {
            class: [onRowClick ? 'clickable' : '', rowClass ? rowClass(r) : ''].join(' ').trim() || null,
            title: rowTitle ? rowTitle(r) : null,
            tabindex: onRowClick ? '0' : null,
            onclick: onRowClick ? () => onRowClick(r) : null,
            onkeydown: onRowClick
              ? (e) => {
                  if (e.key === 'Enter') onRowClick(r);
                }
              : null,
          },
          columns.map((c) => h('td', { class: c.cls }, c.value(r))),
        ),
      ),
    ),
  );
}
