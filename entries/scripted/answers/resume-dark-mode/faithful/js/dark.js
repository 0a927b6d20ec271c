// Dark mode, remembered in localStorage.
const darkToggle = document.getElementById('darkToggle');
function setDark(on) {
  document.documentElement.classList.toggle('dark', on);
  darkToggle.setAttribute('aria-pressed', on ? 'true' : 'false');
}
setDark(localStorage.getItem('dark-mode') === 'on');
darkToggle.addEventListener('click', () => {
  const on = darkToggle.getAttribute('aria-pressed') !== 'true';
  localStorage.setItem('dark-mode', on ? 'on' : 'off');
  setDark(on);
});
