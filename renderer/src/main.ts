import { mount, type Component } from 'svelte';
import App from './App.svelte';
import './app.css';
import './color-themes.css';

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element');

// A public dashboard's view needs no session: its own page, loaded as a chunk of its own.
const page: Promise<Component> = window.location.pathname.startsWith('/public/dashboards/')
  ? import('./pages/public/PublicDashboardPage.svelte').then((module) => module.default)
  : Promise.resolve(App);

export default page.then((component) => mount(component, { target }));
