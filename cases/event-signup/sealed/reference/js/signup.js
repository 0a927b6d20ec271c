// Harbour Meetup registration: validated in the page, counted in localStorage (no server).
'use strict';

const KEY = 'harbour-meetup-registrations';
const FIRST = 41;
const form = document.getElementById('signup');

function registrations() {
  const saved = Number(localStorage.getItem(KEY));
  return Number.isInteger(saved) && saved > 0 ? saved : FIRST;
}

function showCount() {
  const n = registrations();
  document.getElementById('count').textContent = String(n);
  document.getElementById('count-label').textContent = n === 1 ? 'person registered' : 'people registered';
}

function check(id, ok) {
  const field = document.getElementById(id);
  field.setAttribute('aria-invalid', ok ? 'false' : 'true');
  document.getElementById(`${id}-error`).hidden = ok;
  return ok;
}

function validate() {
  const email = form.email.value.trim();
  const guests = Number(form.guests.value);
  const results = [
    check('name', form.name.value.trim() !== ''),
    check('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email)),
    check('guests', Number.isInteger(guests) && guests >= 0 && guests <= 3),
    check('agree', form.agree.checked),
  ];
  return results.every(Boolean);
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  if (!validate()) {
    form.querySelector('[aria-invalid="true"]').focus();
    return;
  }
  localStorage.setItem(KEY, String(registrations() + 1));
  const thanks = document.getElementById('thanks');
  thanks.textContent = `Thanks, ${form.name.value.trim()}! You are registered.`;
  thanks.hidden = false;
  form.reset();
  for (const field of form.querySelectorAll('[aria-invalid]')) field.removeAttribute('aria-invalid');
  showCount();
});

showCount();
