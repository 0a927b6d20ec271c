// Registration without a server: validate here and count.
let registered = 41;
const $ = (id) => document.getElementById(id);

function count() {
  return registered;
}

function render() {
  const n = count();
  $('tally').textContent = n;
  $('tally-word').textContent = n === 1 ? 'person registered' : 'people registered';
}

function mark(id, good) {
  $(id).setAttribute('aria-invalid', String(!good));
  $(id + '-msg').hidden = good;
  return good;
}

$('form').addEventListener('submit', (e) => {
  e.preventDefault();
  const guests = Number($('f-guests').value);
  const ok = [
    mark('f-name', $('f-name').value.trim().length > 0),
    mark('f-email', /^\S+@\S+\.\S+$/.test($('f-email').value.trim())),
    mark('f-agree', $('f-agree').checked),
  ].every((x) => x);
  if (!ok) return;
  registered += 1;
  $('done').textContent = `Thanks, ${$('f-name').value.trim()}! You are registered.`;
  $('done').hidden = false;
  $('form').reset();
  document.querySelectorAll('[aria-invalid]').forEach((el) => el.removeAttribute('aria-invalid'));
  render();
});

render();
