// Dark mode.
const darkToggle = document.getElementById('darkToggle');
darkToggle.addEventListener('click', () => {
  const on = !document.documentElement.classList.contains('dark');
  document.documentElement.classList.toggle('dark', on);
  darkToggle.setAttribute('aria-pressed', on ? 'true' : 'false');
});
