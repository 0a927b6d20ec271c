// Scripted faithful answer: TodoMVC behaviour written again from the brief.
'use strict';

const KEY = 'recon-faithful-todos';
const STARTING_TODOS = [
  { id: 1, title: 'Pin the evidence', done: true },
  { id: 2, title: 'Write the brief', done: true },
];

class TodoStore {
  constructor(key) {
    this.key = key;
    const saved = localStorage.getItem(key);
    this.todos = saved === null ? STARTING_TODOS.map((t) => ({ ...t })) : JSON.parse(saved);
  }

  persist() {
    localStorage.setItem(this.key, JSON.stringify(this.todos));
  }

  add(title) {
    const id = this.todos.reduce((top, t) => Math.max(top, t.id), 0) + 1;
    this.todos.push({ id, title, done: false });
  }

  get(id) {
    return this.todos.find((t) => t.id === id);
  }

  drop(id) {
    this.todos = this.todos.filter((t) => t.id !== id);
  }

  get remaining() {
    return this.todos.filter((t) => !t.done).length;
  }
}

const store = new TodoStore(KEY);
const el = (selector) => document.querySelector(selector);
const items = el('.items');
let renaming = null;

function visibleTodos() {
  const view = location.hash.replace('#/', '');
  if (view === 'active') return store.todos.filter((t) => !t.done);
  if (view === 'completed') return store.todos.filter((t) => t.done);
  return store.todos;
}

function row(todo) {
  const li = document.createElement('li');
  li.dataset.id = todo.id;
  li.classList.toggle('done', todo.done);
  li.classList.toggle('renaming', renaming === todo.id);
  li.innerHTML =
    '<div class="row"><input class="tick" type="checkbox"><label></label>' +
    '<button class="remove"></button></div><input class="rename">';
  const tick = li.querySelector('.tick');
  tick.checked = todo.done;
  tick.setAttribute('aria-label', `Toggle ${todo.title}`);
  li.querySelector('label').textContent = todo.title;
  li.querySelector('.remove').setAttribute('aria-label', `Delete ${todo.title}`);
  const rename = li.querySelector('.rename');
  rename.value = todo.title;
  rename.setAttribute('aria-label', `Edit ${todo.title}`);
  return li;
}

function draw() {
  items.replaceChildren(...visibleTodos().map(row));
  const any = store.todos.length > 0;
  const left = store.remaining;
  el('.body').hidden = !any;
  el('.bar').hidden = !any;
  el('.all-done').checked = any && left === 0;
  el('.left').innerHTML = `<strong>${left}</strong> ${left === 1 ? 'item' : 'items'} left`;
  el('.sweep').hidden = left === store.todos.length;
  const view = location.hash || '#/';
  for (const link of document.querySelectorAll('.views a')) {
    link.classList.toggle('on', link.getAttribute('href') === view);
  }
  const editor = items.querySelector('.renaming .rename');
  if (editor) editor.focus();
}

function commit() {
  store.persist();
  draw();
}

function todoOf(node) {
  const li = node.closest('li');
  return li ? store.get(Number(li.dataset.id)) : undefined;
}

function stopRenaming(input, keep) {
  const todo = todoOf(input);
  if (!todo || renaming !== todo.id) return;
  renaming = null;
  const title = input.value.trim();
  if (keep && title) todo.title = title;
  if (keep && !title) store.drop(todo.id);
  commit();
}

el('.entry').addEventListener('keydown', (event) => {
  const title = event.target.value.trim();
  if (event.key !== 'Enter' || !title) return;
  store.add(title);
  event.target.value = '';
  commit();
});

el('.all-done').addEventListener('change', (event) => {
  for (const todo of store.todos) todo.done = event.target.checked;
  commit();
});

el('.sweep').addEventListener('click', () => {
  store.todos = store.todos.filter((t) => !t.done);
  commit();
});

items.addEventListener('change', (event) => {
  if (!event.target.matches('.tick')) return;
  todoOf(event.target).done = event.target.checked;
  commit();
});

items.addEventListener('click', (event) => {
  if (!event.target.matches('.remove')) return;
  store.drop(todoOf(event.target).id);
  commit();
});

items.addEventListener('dblclick', (event) => {
  if (event.target.tagName !== 'LABEL') return;
  renaming = todoOf(event.target).id;
  draw();
});

items.addEventListener('keydown', (event) => {
  if (!event.target.matches('.rename')) return;
  if (event.key === 'Enter') stopRenaming(event.target, true);
  if (event.key === 'Escape') stopRenaming(event.target, false);
});

items.addEventListener('focusout', (event) => {
  if (event.target.matches('.rename')) stopRenaming(event.target, true);
});

window.addEventListener('hashchange', draw);
draw();
