/* TodoMVC in plain JavaScript, written for the ReconBench todomvc case.
 * Todos live in localStorage under "todos-recon"; ids are sequential (no clock). */
(function (window, document) {
	'use strict';

	var STORAGE_KEY = 'todos-recon';
	var ENTER = 'Enter';
	var ESCAPE = 'Escape';
	var FIRST_VISIT = [
		{id: 1, title: 'Pin the evidence', completed: true},
		{id: 2, title: 'Write the brief', completed: true}
	];

	function load() {
		var raw = window.localStorage.getItem(STORAGE_KEY);
		if (raw === null) {
			return FIRST_VISIT.map(function (todo) {
				return {id: todo.id, title: todo.title, completed: todo.completed};
			});
		}
		try {
			var parsed = JSON.parse(raw);
			return Array.isArray(parsed) ? parsed : [];
		} catch (e) {
			return [];
		}
	}

	var todos = load();
	var editing = null;

	function save() {
		window.localStorage.setItem(STORAGE_KEY, JSON.stringify(todos));
	}

	function nextId() {
		return todos.reduce(function (max, todo) {
			return Math.max(max, todo.id);
		}, 0) + 1;
	}

	function filter() {
		var hash = document.location.hash;
		if (hash === '#/active') {
			return 'active';
		}
		if (hash === '#/completed') {
			return 'completed';
		}
		return 'all';
	}

	function shown(todo) {
		var which = filter();
		return which === 'all' || (which === 'active') === !todo.completed;
	}

	function $(selector) {
		return document.querySelector(selector);
	}

	function item(todo) {
		var li = document.createElement('li');
		li.setAttribute('data-id', String(todo.id));
		if (todo.completed) {
			li.className = 'completed';
		}
		if (editing === todo.id) {
			li.className += ' editing';
		}
		var view = document.createElement('div');
		view.className = 'view';
		var toggle = document.createElement('input');
		toggle.className = 'toggle';
		toggle.type = 'checkbox';
		toggle.checked = todo.completed;
		toggle.setAttribute('aria-label', 'Toggle ' + todo.title);
		var label = document.createElement('label');
		label.textContent = todo.title;
		var destroy = document.createElement('button');
		destroy.className = 'destroy';
		destroy.setAttribute('aria-label', 'Delete ' + todo.title);
		view.appendChild(toggle);
		view.appendChild(label);
		view.appendChild(destroy);
		li.appendChild(view);
		var edit = document.createElement('input');
		edit.className = 'edit';
		edit.value = todo.title;
		edit.setAttribute('aria-label', 'Edit ' + todo.title);
		li.appendChild(edit);
		return li;
	}

	function render() {
		var list = $('.todo-list');
		list.textContent = '';
		todos.filter(shown).forEach(function (todo) {
			list.appendChild(item(todo));
		});
		var left = todos.filter(function (todo) {
			return !todo.completed;
		}).length;
		var done = todos.length - left;
		$('.main').style.display = todos.length ? 'block' : 'none';
		$('.footer').style.display = todos.length ? 'block' : 'none';
		$('.toggle-all').checked = todos.length > 0 && left === 0;
		var count = $('.todo-count');
		count.textContent = '';
		var strong = document.createElement('strong');
		strong.textContent = String(left);
		count.appendChild(strong);
		count.appendChild(document.createTextNode(left === 1 ? ' item left' : ' items left'));
		$('.clear-completed').style.display = done ? 'block' : 'none';
		var which = filter();
		Array.prototype.forEach.call(document.querySelectorAll('.filters a'), function (a) {
			var target = a.getAttribute('href').replace('#/', '') || 'all';
			a.className = target === which ? 'selected' : '';
		});
		var input = list.querySelector('li.editing .edit');
		if (input) {
			input.focus();
		}
	}

	function update() {
		save();
		render();
	}

	function find(element) {
		var li = element.closest('li');
		var id = li ? Number(li.getAttribute('data-id')) : NaN;
		for (var i = 0; i < todos.length; i++) {
			if (todos[i].id === id) {
				return todos[i];
			}
		}
		return null;
	}

	function finishEdit(input, keep) {
		var todo = find(input);
		if (!todo || editing !== todo.id) {
			return;
		}
		editing = null;
		if (keep) {
			var title = input.value.trim();
			if (title) {
				todo.title = title;
			} else {
				todos = todos.filter(function (other) {
					return other !== todo;
				});
			}
		}
		update();
	}

	$('.new-todo').addEventListener('keydown', function (event) {
		if (event.key !== ENTER) {
			return;
		}
		var title = event.target.value.trim();
		if (title) {
			todos.push({id: nextId(), title: title, completed: false});
			event.target.value = '';
			update();
		}
	});

	$('.toggle-all').addEventListener('change', function (event) {
		var completed = event.target.checked;
		todos.forEach(function (todo) {
			todo.completed = completed;
		});
		update();
	});

	$('.clear-completed').addEventListener('click', function () {
		todos = todos.filter(function (todo) {
			return !todo.completed;
		});
		update();
	});

	var list = $('.todo-list');
	list.addEventListener('change', function (event) {
		if (event.target.classList.contains('toggle')) {
			var todo = find(event.target);
			todo.completed = event.target.checked;
			update();
		}
	});
	list.addEventListener('click', function (event) {
		if (event.target.classList.contains('destroy')) {
			var todo = find(event.target);
			todos = todos.filter(function (other) {
				return other !== todo;
			});
			update();
		}
	});
	list.addEventListener('dblclick', function (event) {
		if (event.target.tagName === 'LABEL') {
			editing = find(event.target).id;
			render();
		}
	});
	list.addEventListener('keydown', function (event) {
		if (!event.target.classList.contains('edit')) {
			return;
		}
		if (event.key === ENTER) {
			finishEdit(event.target, true);
		} else if (event.key === ESCAPE) {
			finishEdit(event.target, false);
		}
	});
	list.addEventListener('focusout', function (event) {
		if (event.target.classList.contains('edit')) {
			finishEdit(event.target, true);
		}
	});

	window.addEventListener('hashchange', render);
	render();
})(window, document);
